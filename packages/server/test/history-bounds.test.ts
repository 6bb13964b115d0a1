/**
 * Bounded history through the server: the channel cap and the idle TTL drop histories,
 * clients resuming from a dropped channel are told `recovered: false` (never replayed
 * something wrong), `/metrics` counts both, and the options reach the engines.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBus } from '../src/engine/memory/memory-bus.js';
import { MemoryEngine } from '../src/engine/memory/memory-engine.js';
import type { RedisEngine } from '../src/engine/redis/redis-engine.js';
import { engineFrom } from '../src/http/plugin.js';
import { defaultOptions } from '../src/options.js';
import { type Started, startServer } from './start-server.js';
import { eventually, type Msg, TestClient, type Transport } from './test-client.js';

interface Position {
  offset: number;
  epoch: string;
}
type ReplayInfo = Position & { recovered: boolean };

const positionOf = (m: Msg): Position => (m.ext as { replay: Position }).replay;

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  if (m === null) throw new Error(`no ${name} in /metrics`);
  return Number(m[1]);
}

describe.each<Transport>(['websocket', 'long-polling'])('bounded history over %s', (transport) => {
  let s: Started;
  const clients: TestClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await s.server.close();
  });

  async function client(): Promise<TestClient> {
    const c = new TestClient(s.base, transport);
    clients.push(c);
    expect((await c.connect({ replay: true })).successful).toBe(true);
    return c;
  }
  async function resume(channel: string, since?: Position): Promise<ReplayInfo> {
    const c = await client();
    const reply = await c.request({
      channel: '/meta/subscribe',
      clientId: c.clientId,
      subscription: channel,
      ...(since ? { ext: { replay: { [channel]: since } } } : {}),
    });
    expect(reply.successful).toBe(true);
    return (reply.ext as { replay: Record<string, ReplayInfo> }).replay[channel] as ReplayInfo;
  }
  /** The position a subscriber of `channel` holds after `n` publications. */
  async function held(channel: string, n: number): Promise<Position> {
    const c = await client();
    await c.subscribe(channel);
    for (let i = 1; i <= n; i++) await s.server.bayou.publish(channel, i);
    await eventually(() => c.deliveries(channel).length === n);
    const last = positionOf(c.deliveries(channel).at(-1) as Msg);
    await c.close();
    return last;
  }

  it('pushes the least recently published channel out past historyChannels; its clients resume with recovered: false', async () => {
    s = await startServer({ historyChannels: 2 });
    const old = await held('/cap/a', 2);
    await s.server.bayou.publish('/cap/b', 1);
    await s.server.bayou.publish('/cap/a', 3); // /a is the most recent again: /b goes next
    await s.server.bayou.publish('/cap/c', 1);
    expect(await metric(s.base, 'bayou_history_evicted_total')).toBe(1);
    expect((await resume('/cap/a', old)).recovered).toBe(true);
    await s.server.bayou.publish('/cap/d', 1);
    await s.server.bayou.publish('/cap/e', 1);
    expect(await metric(s.base, 'bayou_history_channels')).toBe(2);
    const info = await resume('/cap/a', old);
    expect(info.recovered).toBe(false);
    expect(info.epoch).not.toBe(old.epoch);
    expect(info.offset).toBe(0);
  });

  it('drops a channel idle for historyTtl at the sweep; a client resuming from it gets recovered: false', async () => {
    s = await startServer({ historyTtl: 200 });
    const old = await held('/idle/a', 3);
    await eventually(async () => (await metric(s.base, 'bayou_history_channels')) === 0);
    expect(await metric(s.base, 'bayou_history_expired_total')).toBe(1);
    const info = await resume('/idle/a', old);
    expect(info).toMatchObject({ recovered: false, offset: 0 });
    expect(info.epoch).not.toBe(old.epoch);
  });
});

describe('engines built from the server options', () => {
  it('gives the memory engine the cap and TTL, and the Redis engine the cap and the TTL as its epoch lifetime', () => {
    const options = { ...defaultOptions, historyChannels: 7, historyTtl: 5000 };
    const memory = engineFrom({}, options) as MemoryEngine;
    for (let i = 0; i < 10; i++) memory.bus.history.publish(`/c/${i}`, 'x', { size: 1, ttlMs: 5000 }, i);
    expect(memory.historyStats()).toEqual({ channels: 7, expired: 0, evicted: 3 });
    const redis = engineFrom({ redis: 'redis://127.0.0.1:1' }, options) as RedisEngine;
    expect(redis.options).toMatchObject({ epochTtlMs: 5000, historyChannels: 7 });
    const told = engineFrom({ redis: 'redis://127.0.0.1:1', redisEngine: { epochTtlMs: 60_000 } }, options);
    expect((told as RedisEngine).options.epochTtlMs).toBe(60_000);
  });

  it('refuses a cap below one channel, and history options beside a shared bus', async () => {
    await expect(startServer({ historyChannels: 0 })).rejects.toThrow(/historyChannels/);
    expect(() => new MemoryEngine({ bus: new MemoryBus(), historyChannels: 5 })).toThrow(/historyChannels/);
    expect(() => new MemoryBus({ sweepInterval: 1 })).toThrow(/sweepInterval/);
  });
});
