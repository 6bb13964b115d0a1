/**
 * The bindings against a test double of the client: which components re-render on which
 * change, how updates coalesce to frames, flashes, subscription sharing and release,
 * `visibleOnly` driven by a test IntersectionObserver, hooks for connection and channels.
 */
import { act, Profiler, type ReactNode, useRef } from 'react';
import { renderToString } from 'react-dom/server';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import {
  BayouProvider,
  FLASH_DOWN,
  FLASH_UP,
  LiveCell,
  useChannel,
  useConnectionState,
  useField,
  useInView,
  useLiveStats,
  useRecord,
  useTransport,
} from '../src/index.js';
import { FakeClient, FakeIntersectionObserver } from './fake-client.js';
import { mount, update } from './render.js';

const SUBJECT = '/demo/prices/AAA';

let client: FakeClient;
let renders: Map<string, number>;

function Counted({ id, children }: { id: string; children: ReactNode }): ReactNode {
  return (
    <Profiler id={id} onRender={() => renders.set(id, (renders.get(id) ?? 0) + 1)}>
      {children}
    </Profiler>
  );
}

function cellText(container: HTMLElement, field: string): string[] {
  return [...container.querySelectorAll(`[data-field="${field}"]`)].map((e) => e.textContent ?? '');
}

beforeEach(() => {
  client = new FakeClient();
  renders = new Map();
  vi.stubGlobal('IntersectionObserver', FakeIntersectionObserver);
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('LiveCell', () => {
  it('re-renders only the cell whose field changed', async () => {
    const fields = ['bid', 'ask', 'last'];
    const { container } = await mount(
      <BayouProvider client={client}>
        {fields.map((f) => (
          <Counted key={f} id={f}>
            <LiveCell subject={SUBJECT} field={f} />
          </Counted>
        ))}
      </BayouProvider>,
    );
    const store = client.recordStore(SUBJECT);
    await update(() => store.push({ bid: 1, ask: 2, last: 1.5 }));
    expect(Object.fromEntries(renders)).toEqual({ bid: 2, ask: 2, last: 2 });
    expect(cellText(container, 'bid')).toEqual(['1']);

    await update(() => store.push({ bid: 1.1 }));
    expect(Object.fromEntries(renders)).toEqual({ bid: 3, ask: 2, last: 2 });
    expect(cellText(container, 'bid')).toEqual(['1.1']);

    await update(() => store.push({ ask: 2.2, last: 1.6 }));
    expect(Object.fromEntries(renders)).toEqual({ bid: 3, ask: 3, last: 3 });
    expect(cellText(container, 'ask')).toEqual(['2.2']);
  });

  it('renders once per frame however many updates arrive before it, with the latest value', async () => {
    const { container } = await mount(
      <BayouProvider client={client}>
        <Counted id="bid">
          <LiveCell subject={SUBJECT} field="bid" />
        </Counted>
      </BayouProvider>,
    );
    const store = client.recordStore(SUBJECT);
    await update(() => {
      for (let i = 1; i <= 50; i++) store.push({ bid: i });
    });
    expect(renders.get('bid')).toBe(2);
    expect(cellText(container, 'bid')).toEqual(['50']);
  });

  it('delivers each update at once with coalesce="none"', async () => {
    await mount(
      <BayouProvider client={client} coalesce="none">
        <Counted id="bid">
          <LiveCell subject={SUBJECT} field="bid" />
        </Counted>
      </BayouProvider>,
    );
    const store = client.recordStore(SUBJECT);
    for (let i = 1; i <= 3; i++) await update(() => store.push({ bid: i }), 0);
    expect(renders.get('bid')).toBe(4);
  });

  it('formats values and shows the placeholder before the first image', async () => {
    const { container } = await mount(
      <BayouProvider client={client}>
        <LiveCell subject={SUBJECT} field="bid" placeholder="…" format={(v) => (v as number).toFixed(2)} />
      </BayouProvider>,
    );
    expect(cellText(container, 'bid')).toEqual(['…']);
    await update(() => client.recordStore(SUBJECT).push({ bid: 3 }));
    expect(cellText(container, 'bid')).toEqual(['3.00']);
  });

  it('flashes up and down on numeric changes and clears the class after the flash time', async () => {
    const { container } = await mount(
      <BayouProvider client={client}>
        <LiveCell subject={SUBJECT} field="bid" flash={80} />
        <LiveCell subject={SUBJECT} field="name" flash={80} />
      </BayouProvider>,
    );
    const store = client.recordStore(SUBJECT);
    const bid = container.querySelector('[data-field="bid"]')!;
    const name = container.querySelector('[data-field="name"]')!;
    await update(() => store.push({ bid: 10, name: 'a' }));
    expect(bid.className).toBe(''); // the first value is not a change
    await update(() => store.push({ bid: 11, name: 'b' }));
    expect(bid.classList.contains(FLASH_UP)).toBe(true);
    expect(name.className).toBe(''); // not numeric
    await update(() => store.push({ bid: 9 }));
    expect(bid.classList.contains(FLASH_DOWN)).toBe(true);
    expect(bid.classList.contains(FLASH_UP)).toBe(false);
    await vi.waitFor(() => expect(bid.className).toBe(''), { timeout: 2000, interval: 20 });
  });

  it('makes one subscription for a hundred cells on one subject and releases it with the last', async () => {
    const cells = (n: number) => (
      <BayouProvider client={client}>
        {Array.from({ length: n }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list
          <LiveCell key={i} subject={SUBJECT} field={['bid', 'ask', 'last'][i % 3]!} />
        ))}
      </BayouProvider>
    );
    const view = await mount(cells(100));
    const store = client.recordStore(SUBJECT);
    expect(store.listeners.size).toBe(1);
    expect(store.opened).toBe(1);
    await update(() => store.push({ bid: 1, ask: 2, last: 3 }));
    expect(cellText(view.container, 'ask')).toHaveLength(33);
    expect(new Set(cellText(view.container, 'ask'))).toEqual(new Set(['2']));
    await view.rerender(cells(1));
    expect(store.listeners.size).toBe(1);
    await view.unmount();
    expect(store.listeners.size).toBe(0);
    expect(store.opened).toBe(1);
  });

  it('with visibleOnly subscribes when the cell enters the viewport and releases it when it leaves', async () => {
    const { container } = await mount(
      <BayouProvider client={client}>
        {['AAA', 'AAB', 'AAC'].map((s) => (
          <LiveCell key={s} subject={`/demo/prices/${s}`} field="bid" visibleOnly={{ rootMargin: '50px' }} />
        ))}
      </BayouProvider>,
    );
    const cells = [...container.querySelectorAll('[data-field="bid"]')];
    expect(FakeIntersectionObserver.observed).toBe(3);
    expect(FakeIntersectionObserver.instances.size).toBe(1); // one shared observer
    expect([...FakeIntersectionObserver.instances][0]!.options.rootMargin).toBe('50px');
    expect(client.liveStores).toBe(0);

    await update(() => FakeIntersectionObserver.setInView(cells.slice(0, 2), true));
    expect(client.liveStores).toBe(2);
    expect(client.recordStore('/demo/prices/AAA').listeners.size).toBe(1);
    expect(client.recordStore('/demo/prices/AAC').listeners.size).toBe(0);

    await update(() => client.recordStore('/demo/prices/AAA').push({ bid: 5 }));
    expect(cellText(container, 'bid')[0]).toBe('5');

    await update(() => {
      FakeIntersectionObserver.setInView(cells.slice(0, 1), false);
      FakeIntersectionObserver.setInView(cells.slice(2), true);
    });
    expect(client.recordStore('/demo/prices/AAA').listeners.size).toBe(0);
    expect(client.recordStore('/demo/prices/AAB').listeners.size).toBe(1);
    expect(client.recordStore('/demo/prices/AAC').listeners.size).toBe(1);
  });
});

// Probe components for the hook tests; what they see goes into `seen`.
let seen: unknown[] = [];

function WholeRecord(): ReactNode {
  seen.push(useRecord(SUBJECT).data);
  return null;
}

function AskField(): ReactNode {
  return <span data-field="ask">{String(useField(SUBJECT, 'ask').data ?? '-')}</span>;
}

function BidAsk(): ReactNode {
  const { data: image } = useRecord<{ bid: number; ask: number }>(SUBJECT, { fields: ['bid', 'ask'] });
  return <span id="pair">{image === null ? '-' : `${image.bid}/${image.ask}`}</span>;
}

function InViewProbe(): ReactNode {
  const ref = useRef<HTMLDivElement>(null);
  seen.push(useInView(ref));
  return <div ref={ref} id="probe" />;
}

function StateText(): ReactNode {
  return <span id="state">{useConnectionState()}</span>;
}

function TransportText(): ReactNode {
  return <span id="transport">{useTransport() ?? 'none'}</span>;
}

function LobbyListener({ tag }: { tag: string }): ReactNode {
  useChannel('/chat/lobby', (m) => seen.push(`${tag}:${String(m.data)}`));
  return null;
}

function StatsProbe(): ReactNode {
  seen.push(useLiveStats(100));
  return null;
}

function StatusProbe({ subject }: { subject: string }): ReactNode {
  const field = useField<number>(subject, 'bid');
  const record = useRecord(subject);
  const off = useField(subject, 'bid', { enabled: false });
  seen.push(`${field.status}/${record.status}/${off.status}:${field.error?.message ?? ''}`);
  return null;
}

function ChannelProbe({ channel }: { channel: string }): ReactNode {
  const { data, status, error } = useChannel<number>(channel);
  seen.push(`${channel} ${status} ${data ?? '-'} ${error?.message ?? ''}`.trim());
  return null;
}

describe('hooks', () => {
  beforeEach(() => {
    seen = [];
  });

  it('useRecord re-renders on any field; useField only on its own', async () => {
    const { container } = await mount(
      <BayouProvider client={client}>
        <Counted id="whole">
          <WholeRecord />
        </Counted>
        <Counted id="ask">
          <AskField />
        </Counted>
      </BayouProvider>,
    );
    const store = client.recordStore(SUBJECT);
    // The second render is the status: the server accepted the subscription.
    expect(seen).toEqual([null, null]);
    await update(() => store.push({ bid: 1 }));
    await update(() => store.push({ bid: 2 }));
    expect(seen).toEqual([null, null, { bid: 1 }, { bid: 2 }]);
    expect(renders.get('ask')).toBe(2);
    await update(() => store.push({ ask: 3 }));
    expect(cellText(container, 'ask')).toEqual(['3']);
    expect(store.listeners.size).toBe(1);
  });

  it('useRecord with fields asks the client for that subset', async () => {
    const { container } = await mount(
      <BayouProvider client={client}>
        <BidAsk />
      </BayouProvider>,
    );
    expect(client.requested.get(SUBJECT)).toEqual({ fields: ['bid', 'ask'] });
    const store = client.recordStore(SUBJECT);
    expect(store.listeners.size).toBe(1);
    await update(() => store.push({ bid: 1, ask: 2 }));
    expect(container.querySelector('#pair')!.textContent).toBe('1/2');
  });

  it('useInView reports entering and leaving', async () => {
    const { container } = await mount(<InViewProbe />);
    const probe = container.querySelector('#probe')!;
    await update(() => FakeIntersectionObserver.setInView([probe], true), 0);
    expect(seen.at(-1)).toBe(true);
    await update(() => FakeIntersectionObserver.setInView([probe], false), 0);
    expect(seen.at(-1)).toBe(false);
  });

  it('useConnectionState follows the client', async () => {
    const { container } = await mount(
      <BayouProvider client={client}>
        <StateText />
      </BayouProvider>,
    );
    expect(container.querySelector('#state')!.textContent).toBe('disconnected');
    await update(() => client.setState('connecting'), 0);
    await update(() => client.setState('connected'), 0);
    expect(container.querySelector('#state')!.textContent).toBe('connected');
  });

  it('useTransport follows the transport, streaming included, and shows null once the link is lost', async () => {
    const { container } = await mount(
      <BayouProvider client={client}>
        <TransportText />
      </BayouProvider>,
    );
    const shown = () => container.querySelector('#transport')!.textContent;
    expect(shown()).toBe('none');
    await update(() => {
      client.transport = 'streaming';
      client.setState('connected');
    }, 0);
    expect(shown()).toBe('streaming');
    // A lost connection emits no transport event: the state change alone must show it.
    await update(() => {
      client.transport = null;
      client.setState('reconnecting');
    }, 0);
    expect(shown()).toBe('none');
  });

  it('useChannel delivers messages to the latest handler and unsubscribes on unmount', async () => {
    const view = await mount(
      <BayouProvider client={client}>
        <LobbyListener tag="a" />
      </BayouProvider>,
    );
    await update(() => client.deliver('/chat/lobby', 1), 0);
    await view.rerender(
      <BayouProvider client={client}>
        <LobbyListener tag="b" />
      </BayouProvider>,
    );
    await update(() => client.deliver('/chat/lobby', 2), 0);
    expect(seen).toEqual(['a:1', 'b:2']);
    expect(client.channels.get('/chat/lobby')!.size).toBe(1);
    await view.unmount();
    expect(client.channels.get('/chat/lobby')!.size).toBe(0);
  });

  it('useField and useRecord report connecting, subscribed and a refused subscription', async () => {
    client.denied.set('/demo/prices/DENIED', new Error('403:/demo/prices/DENIED:subscribe_denied'));
    await mount(
      <BayouProvider client={client}>
        <StatusProbe subject={SUBJECT} />
        <StatusProbe subject="/demo/prices/DENIED" />
      </BayouProvider>,
    );
    expect(seen.slice(0, 2)).toEqual(['connecting/connecting/idle:', 'connecting/connecting/idle:']);
    expect(seen).toContain('subscribed/subscribed/idle:');
    expect(seen.at(-1)).toBe('error/error/idle:403:/demo/prices/DENIED:subscribe_denied');
  });

  it('useChannel returns the latest data and its status, and reports a refusal', async () => {
    client.denied.set('/chat/secret', new Error('403:/chat/secret:subscribe_denied'));
    await mount(
      <BayouProvider client={client}>
        <ChannelProbe channel="/chat/lobby" />
        <ChannelProbe channel="/chat/secret" />
      </BayouProvider>,
    );
    await update(() => client.deliver('/chat/lobby', 5), 0);
    expect(seen).toContain('/chat/lobby subscribed -');
    expect(seen.at(-1)).toBe('/chat/lobby subscribed 5');
    expect(seen).toContain('/chat/secret error - 403:/chat/secret:subscribe_denied');
  });

  it("useChannel says 'gap' when the client could not recover what the channel missed", async () => {
    await mount(
      <BayouProvider client={client}>
        <ChannelProbe channel="/chat/lobby" />
      </BayouProvider>,
    );
    await update(() => client.deliver('/chat/lobby', 1), 0);
    await update(() => client.gap('/chat/other'), 0);
    expect(seen.at(-1)).toBe('/chat/lobby subscribed 1');
    await update(() => client.gap('/chat/lobby'), 0);
    expect(seen.at(-1)).toBe('/chat/lobby gap 1');
    await update(() => client.deliver('/chat/lobby', 2), 0);
    expect(seen.at(-1)).toBe('/chat/lobby gap 2');
    await update(() => client.deliver('/chat/lobby', 3), 0);
    expect(seen.at(-1)).toBe('/chat/lobby subscribed 3');
  });

  it('useLiveStats counts live records and updates per second', async () => {
    await mount(
      <BayouProvider client={client}>
        <LiveCell subject="/demo/prices/AAA" field="bid" />
        <LiveCell subject="/demo/prices/AAB" field="bid" />
        <StatsProbe />
      </BayouProvider>,
    );
    const from = seen.length;
    await update(() => {
      for (let i = 0; i < 10; i++) client.recordStore('/demo/prices/AAA').push({ bid: i });
    });
    // The hook samples every 100 ms: wait (in act, so React renders the sample) for one after the pushes.
    await eventually(async () => {
      await act(() => new Promise((r) => setTimeout(r, 20)));
      const samples = seen.slice(from) as { liveRecords: number; updatesPerSecond: number }[];
      expect(samples.find((s) => s.updatesPerSecond > 0)).toMatchObject({ liveRecords: 2 });
    }, 5000);
  });
});

function NoneOrSome(): ReactNode {
  return <b>{useRecord(SUBJECT).data === null ? 'none' : 'some'}</b>;
}

function WithInitial(): ReactNode {
  const { data, status } = useRecord<{ bid: number }>(SUBJECT, { initialData: { bid: 7 } });
  const ask = useField<number>(SUBJECT, 'ask', { initialData: 8 });
  const chat = useChannel<string>('/chat/lobby', null, { initialData: 'hi' });
  return <i>{`${data?.bid} ${ask.data} ${chat.data} ${status} ${ask.status} ${chat.status}`}</i>;
}

describe('server rendering', () => {
  it('renders placeholders and the disconnected state without subscribing', () => {
    client.recordStore(SUBJECT).push({ bid: 1 });
    client.state = 'connected';
    const html = renderToString(
      <BayouProvider client={client}>
        <LiveCell subject={SUBJECT} field="bid" placeholder="-" visibleOnly />
        <StateText />
        <NoneOrSome />
      </BayouProvider>,
    );
    expect(html).toBe('<span data-field="bid">-</span><span id="state">disconnected</span><b>none</b>');
    expect(client.recordStore(SUBJECT).listeners.size).toBe(0);
    expect(FakeIntersectionObserver.observed).toBe(0);
  });

  it('renders initialData with the status `connecting`', () => {
    const html = renderToString(
      <BayouProvider client={client}>
        <WithInitial />
      </BayouProvider>,
    );
    expect(html).toBe('<i>7 8 hi connecting connecting connecting</i>');
    expect(client.recordStore(SUBJECT).listeners.size).toBe(0);
  });
});
