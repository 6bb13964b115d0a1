import { describe, expect, it } from 'vitest';
import { type ShardProbeHost, ShardProbes } from './redis-shard-probes.js';
import { keySlot } from './redis-slots.js';

/** Two masters: slots below 8192 on A, the rest on B. */
function setup() {
  const subscribed = new Set<string>();
  const sent: { topic: string; nonce: string }[] = [];
  const log: string[] = [];
  let reconnects = 0;
  let resyncs = 0;
  const host: ShardProbeHost = {
    probing: () => true,
    masterOf: (slot) => (slot < 8192 ? 'A' : 'B'),
    topic: (k) => `p:{node:n1:${k}}:probe`,
    subscribe: (topic) => {
      subscribed.add(topic);
      log.push(`sub ${topic}`);
      return Promise.resolve();
    },
    unsubscribe: (topic) => {
      subscribed.delete(topic);
      log.push(`unsub ${topic}`);
      return Promise.resolve();
    },
    send: (topic, nonce) => {
      sent.push({ topic, nonce });
      return Promise.resolve();
    },
    reconnect: () => {
      reconnects++;
    },
    resync: () => {
      resyncs++;
    },
    notice: (level, message) => {
      log.push(`${level} ${message}`);
    },
  };
  const probes = new ShardProbes(host, 100);
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { probes, subscribed, sent, log, reconnects: () => reconnects, resyncs: () => resyncs, settle };
}

/** A pub/sub name on master A (`a`) or B. */
function topicOn(master: 'A' | 'B', n = 0): string {
  for (let k = 0, found = 0; ; k++) {
    const topic = `p:{/c/${k}}`;
    if (keySlot(topic) < 8192 === (master === 'A') && found++ === n) return topic;
  }
}

describe('ShardProbes', () => {
  it('sends nothing, and subscribes nothing, while no channel is followed', async () => {
    const t = setup();
    for (let i = 0; i < 3; i++) {
      t.probes.tick();
      await t.settle();
    }
    expect(t.sent).toEqual([]);
    expect(t.subscribed.size).toBe(0);
    expect(t.probes.passes().size).toBe(0);
  });

  it('probes only the shards followed, one probe in flight on each, on a name that hashes there', async () => {
    const t = setup();
    t.probes.followed(topicOn('A'), true);
    t.probes.tick(); // subscribes A's probe name
    await t.settle();
    const [name] = [...t.subscribed];
    expect(keySlot(name as string)).toBeLessThan(8192);
    await new Promise((resolve) => setTimeout(resolve, 100)); // timed on purpose: a probe interval
    t.probes.tick(); // sends on A
    t.probes.tick(); // too early to judge, nothing more sent
    expect(t.sent.map((s) => s.topic)).toEqual([name]);
    expect([...t.probes.passes().keys()]).toEqual(['A']);
    t.probes.received(name as string, (t.sent[0] as { nonce: string }).nonce);
    expect(t.probes.passes().get('A')).toBe(1);
    expect(t.probes.healthy()).toBe(true);
  });

  it('forgets a shard, and unsubscribes its probe name, when its last followed name goes', async () => {
    const t = setup();
    const [a1, a2, b] = [topicOn('A', 0), topicOn('A', 1), topicOn('B')];
    for (const topic of [a1, a2, b]) t.probes.followed(topic, true);
    t.probes.tick();
    await t.settle();
    expect([...t.probes.passes().keys()].sort()).toEqual(['A', 'B']);
    t.probes.followed(a1, false);
    t.probes.tick();
    expect([...t.probes.passes().keys()].sort()).toEqual(['A', 'B']); // a2 is still on A
    t.probes.followed(a2, false);
    t.probes.tick();
    await t.settle();
    expect([...t.probes.passes().keys()]).toEqual(['B']);
    expect(t.subscribed.size).toBe(1);
    t.probes.followed(b, false);
    t.probes.tick();
    await t.settle();
    expect(t.probes.passes().size).toBe(0);
    expect(t.subscribed.size).toBe(0);
  });

  it('resyncs when the connection of a followed shard drops, at most once an interval', async () => {
    const t = setup();
    t.probes.followed(topicOn('A'), true);
    t.probes.tick();
    t.probes.dropped('B', 1000); // a shard it follows nothing on: nothing missed
    expect(t.resyncs()).toBe(0);
    t.probes.dropped('A', 1000);
    t.probes.dropped('A', 1050); // ioredis retrying within the interval
    expect(t.resyncs()).toBe(1);
    t.probes.dropped('A', 1100);
    expect(t.resyncs()).toBe(2);
    expect(t.log.filter((l) => l.startsWith('warn'))).toHaveLength(2);
  });

  it('turns unhealthy when a shard probe does not come back, reports it once for that shard, reconnects', async () => {
    const t = setup();
    t.probes.followed(topicOn('B'), true);
    t.probes.tick();
    await t.settle();
    t.probes.tick(); // sends
    await new Promise((resolve) => setTimeout(resolve, 100)); // timed on purpose: a probe interval
    t.probes.tick(); // overdue: judged after the poll phase
    await t.settle();
    expect(t.probes.healthy()).toBe(false);
    expect(t.reconnects()).toBe(1);
    expect(t.log.filter((l) => l.startsWith('warn'))).toHaveLength(1);
    expect(t.log.at(-1)).toMatch(/shard B/);
    // The connection dropped: the name is subscribed again, a new probe goes and comes back.
    t.probes.void();
    t.probes.tick();
    await t.settle();
    t.probes.tick();
    const last = t.sent.at(-1) as { topic: string; nonce: string };
    t.probes.received(last.topic, last.nonce);
    expect(t.probes.healthy()).toBe(true);
    expect(t.log.at(-1)).toMatch(/^info .*shard B/);
  });
});
