import { describe, expect, it } from 'vitest';
import { DeliveryProbe, type ProbeHost } from './redis-probe.js';

function setup(probing = true) {
  let now = 0;
  const sent: string[] = [];
  const notices: string[] = [];
  let reconnects = 0;
  const host: ProbeHost & { probingNow: boolean } = {
    probingNow: probing,
    probing: () => host.probingNow,
    send: (nonce) => {
      sent.push(nonce);
      return Promise.resolve();
    },
    reconnect: () => {
      reconnects++;
    },
    notice: (level) => {
      notices.push(level);
    },
  };
  const probe = new DeliveryProbe(host, 100, () => now);
  return {
    probe,
    host,
    sent,
    notices,
    reconnects: () => reconnects,
    advance: (ms: number) => {
      now += ms;
      probe.tick();
    },
  };
}

describe('DeliveryProbe', () => {
  it('keeps one probe in flight and sends the next once it is back', () => {
    const t = setup();
    t.advance(100);
    t.advance(50); // early tick: still waiting for the first
    expect(t.sent).toEqual(['1']);
    t.probe.received('1');
    t.advance(100);
    expect(t.sent).toEqual(['1', '2']);
    expect(t.probe.healthy()).toBe(true);
  });

  it('sends nothing while the host says not to (no channel followed, connection down)', () => {
    const t = setup(false);
    t.advance(100);
    t.advance(100);
    expect(t.sent).toEqual([]);
  });

  it('turns unhealthy on a missing probe, reconnects each time, reports once, and heals when one is back', () => {
    const t = setup();
    t.advance(100);
    t.advance(100); // the first probe missed
    expect(t.probe.healthy()).toBe(false);
    expect(t.reconnects()).toBe(1);
    t.advance(100); // a new one goes
    t.advance(100); // missed again: reconnect again, no second report
    expect(t.reconnects()).toBe(2);
    expect(t.notices).toEqual(['warn']);
    t.advance(100);
    t.probe.received('999'); // not ours
    expect(t.probe.healthy()).toBe(false);
    t.probe.received(t.sent[t.sent.length - 1] as string);
    expect(t.probe.healthy()).toBe(true);
    expect(t.notices).toEqual(['warn', 'info']);
  });

  it('forgets a probe lost with its connection instead of counting it missed', () => {
    const t = setup();
    t.advance(100);
    t.probe.void();
    t.advance(100);
    expect(t.probe.healthy()).toBe(true);
    expect(t.sent).toEqual(['1', '2']);
  });
});
