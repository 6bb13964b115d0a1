import { describe, expect, it } from 'vitest';
import type { EngineNode, Publication, StreamPosition } from '../engine.js';
import { DeliveryGate, type NodeRecovery } from './redis-delivery.js';

const pub = (channel: string, offset: number, epoch = 'e1'): Publication => ({
  channel,
  payload: `${channel}#${offset}`,
  position: { offset, epoch },
});

function gate() {
  const got: string[] = [];
  const node = {
    deliver: (p: Publication) => got.push(p.payload),
    missed: (names: readonly string[]) => got.push(`missed ${names.join(' ')}`),
  } as unknown as EngineNode;
  return { gate: new DeliveryGate(() => node), got };
}

function history(answers: Record<string, NodeRecovery>) {
  return async (channel: string, _at: StreamPosition) => answers[channel] as NodeRecovery;
}

describe('DeliveryGate', () => {
  it('drops a publication at or before the last position delivered on its channel, not a new epoch', () => {
    const { gate: g, got } = gate();
    for (const p of [
      pub('/a', 1),
      pub('/a', 2),
      pub('/a', 2),
      pub('/a', 1),
      pub('/b', 1),
      pub('/a', 1, 'e2'),
    ])
      g.accept(p);
    g.accept({ channel: '/r', payload: 'record', position: null, record: true });
    expect(got).toEqual(['/a#1', '/a#2', '/b#1', '/a#1', 'record']);
  });

  it('after a reconnect, delivers the missed part from history, then what it held, each once and in order', async () => {
    const { gate: g, got } = gate();
    g.accept(pub('/a', 1));
    g.accept(pub('/gone', 1));
    g.hold();
    g.accept(pub('/a', 4));
    g.accept(pub('/a', 5));
    const since = history({
      '/a': {
        recovered: true,
        publications: [pub('/a', 2), pub('/a', 3), pub('/a', 4)],
        position: { offset: 4, epoch: 'e1' },
      },
    });
    await g.catchUp(since, (channel) => channel === '/a');
    g.accept(pub('/a', 6));
    expect(got).toEqual(['/a#1', '/gone#1', '/a#2', '/a#3', '/a#4', '/a#5', '/a#6']);
  });

  it('after a lost connection, reports each followed name history did not cover, after the recovered and before the held', async () => {
    const { gate: g, got } = gate();
    g.accept(pub('/a', 1));
    g.accept(pub('/trimmed', 1));
    g.hold();
    g.accept({ channel: '/plain', payload: 'live', position: null });
    const since = history({
      '/a': { recovered: true, publications: [pub('/a', 2)], position: { offset: 2, epoch: 'e1' } },
      '/trimmed': { recovered: false, position: { offset: 9, epoch: 'e1' } },
    });
    await g.catchUp(since, () => true, ['/a', '/trimmed', '/plain', '/a/*']);
    expect(got).toEqual(['/a#1', '/trimmed#1', '/a#2', 'missed /trimmed /plain /a/*', 'live']);
    // Everything recovered, or nothing followed: nothing to report.
    g.hold();
    await g.catchUp(since, () => true, ['/a']);
    g.hold();
    await g.catchUp(since, () => true);
    expect(got.filter((t) => t.startsWith('missed'))).toHaveLength(1);
  });

  it('releases what it held even when history cannot fill the gap', async () => {
    const { gate: g, got } = gate();
    g.accept(pub('/a', 1));
    g.hold();
    g.accept(pub('/a', 1, 'e2'));
    await g.catchUp(
      history({ '/a': { recovered: false, position: { offset: 1, epoch: 'e2' } } }),
      () => true,
    );
    expect(got).toEqual(['/a#1', '/a#1']);
  });

  it('after a failover that lost writes, forgets the channel position history cannot resume, so the new line is delivered', async () => {
    const { gate: g, got } = gate();
    g.accept(pub('/a', 5)); // delivered from the old primary; the new one stops at 3
    g.hold();
    g.accept(pub('/a', 4)); // a new message on the new primary, same epoch, an offset already seen
    expect(g.holding()).toBe(true);
    await g.catchUp(
      history({ '/a': { recovered: false, position: { offset: 0, epoch: 'e2' } } }),
      () => true,
    );
    expect(g.holding()).toBe(false);
    g.accept(pub('/a', 1, 'e2'));
    expect(got).toEqual(['/a#5', '/a#4', '/a#1']);
  });

  it('when the epoch of its last position is over, delivers the held rest of it, the gap, the new epoch from its start, then what it held, each once', async () => {
    const { gate: g, got } = gate();
    g.accept(pub('/a', 3));
    g.accept(pub('/quiet', 7));
    g.hold();
    g.accept(pub('/a', 4)); // the old epoch's last message, held before the connection dropped
    g.accept(pub('/a', 2, 'e2')); // the new epoch, live once subscribed again: also in its history
    g.accept(pub('/a', 3, 'e2'));
    const since = history({
      '/a': {
        recovered: false,
        restarted: [pub('/a', 1, 'e2'), pub('/a', 2, 'e2')],
        position: { offset: 2, epoch: 'e2' },
      },
      '/quiet': { recovered: false, restarted: [], position: { offset: 0, epoch: 'e2' } },
    });
    await g.catchUp(since, () => true, ['/a', '/quiet']);
    expect(got).toEqual(['/a#3', '/quiet#7', '/a#4', 'missed /a /quiet', '/a#1', '/a#2', '/a#3']);
    // The new epoch's start is the position now: a later catch-up reads on from there.
    const asked: StreamPosition[] = [];
    g.hold();
    await g.catchUp(
      async (_channel, at) => {
        asked.push(at);
        return { recovered: true, publications: [], position: at };
      },
      () => true,
    );
    expect(asked).toHaveLength(2);
    expect(asked).toEqual(
      expect.arrayContaining([
        { offset: 3, epoch: 'e2' },
        { offset: 0, epoch: 'e2' },
      ]),
    );
  });

  it('keeps positions for a bounded number of channels, forgetting the least recently delivered', async () => {
    const got: string[] = [];
    const node = { deliver: (p: Publication) => got.push(p.payload) } as unknown as EngineNode;
    const g = new DeliveryGate(() => node, 2);
    g.accept(pub('/a', 1));
    g.accept(pub('/b', 1));
    g.accept(pub('/a', 2));
    g.accept(pub('/c', 1)); // forgets /b, the least recently delivered
    const asked: string[] = [];
    const since = async (channel: string) => {
      asked.push(channel);
      return { recovered: true as const, publications: [], position: { offset: 2, epoch: 'e1' } };
    };
    g.hold();
    await g.catchUp(since, () => true);
    expect(asked.sort()).toEqual(['/a', '/c']);
  });
});
