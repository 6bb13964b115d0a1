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
  const deferred: (() => void)[] = [];
  const probe = new DeliveryProbe(
    host,
    100,
    () => now,
    (check) => deferred.push(check),
  );
  return {
    probe,
    host,
    sent,
    notices,
    reconnects: () => reconnects,
    /** Moves the clock, ticks, and runs what waited for the poll phase. */
    advance: (ms: number) => {
      now += ms;
      probe.tick();
      for (const check of deferred.splice(0)) check();
    },
    /** Moves the clock and ticks; the poll phase has not come yet. */
    tickOnly: (ms: number) => {
      now += ms;
      probe.tick();
    },
    deferred,
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

  it('does not judge a probe at a tick that fired late, after the loop was held past the interval', () => {
    const t = setup();
    t.advance(100); // probe 1 goes
    t.advance(700); // the loop was held 700 ms: its answer may be waiting unread
    expect(t.probe.healthy()).toBe(true);
    expect(t.reconnects()).toBe(0);
    t.probe.received('1'); // read in the poll phase that follows
    t.advance(100);
    expect(t.sent).toEqual(['1', '2']);
    t.advance(100); // an on-time tick and no answer: missed
    expect(t.probe.healthy()).toBe(false);
    expect(t.reconnects()).toBe(1);
  });

  it('judges an overdue probe only after the poll phase has read what was waiting', () => {
    const t = setup();
    t.advance(100);
    t.tickOnly(100);
    expect(t.deferred).toHaveLength(1);
    t.probe.received('1'); // the answer was in the socket: the poll phase reads it
    for (const check of t.deferred.splice(0)) check();
    expect(t.probe.healthy()).toBe(true);
    expect(t.reconnects()).toBe(0);
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
