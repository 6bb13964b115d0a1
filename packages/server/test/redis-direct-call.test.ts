/**
 * The publish script's call written beside ioredis' reply queue (`redis-direct-call.ts`):
 * a publish never builds an ioredis command, its replies settle in order with the other
 * commands of the connection, a restarted Redis (scripts flushed) still gets the script,
 * an unanswered call fails after `commandTimeoutMs` without putting the queue out of step,
 * and a lost connection fails what is in flight.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import type { Publication } from '../src/engine/engine.js';
import { RedisEngine } from '../src/engine/redis/index.js';
import { DirectScriptCalls } from '../src/engine/redis/redis-direct-call.js';
import { PUBLISH } from '../src/engine/redis/redis-scripts.js';
import { redisAvailable, redisPerFile, requireRedis } from './cluster-helpers.js';

requireRedis('publish calls beside ioredis');

const HISTORY = { size: 100, ttlMs: 60_000 };

describe.runIf(redisAvailable)('publish calls beside ioredis', () => {
  const redis = redisPerFile();
  const engines: RedisEngine[] = [];
  const clients: Redis[] = [];
  let n = 0;
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close().catch(() => undefined);
    for (const c of clients.splice(0)) c.disconnect();
  });

  async function started(commandTimeoutMs = 2000): Promise<{ engine: RedisEngine; received: Publication[] }> {
    const received: Publication[] = [];
    const engine = new RedisEngine({
      url: redis().url,
      keyPrefix: `direct${process.pid}-${++n}:`,
      commandTimeoutMs,
    });
    engines.push(engine);
    await engine.start({ nodeId: `direct-${n}`, deliver: (p) => received.push(p) });
    await engine.broker.subscribe('/direct');
    return { engine, received };
  }

  /** A client as the engine makes them: no resending, no retries of what was in flight. */
  function admin(): Redis {
    const c = new Redis(redis().url, { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 });
    clients.push(c);
    return c;
  }

  it('publishes without an ioredis command, in order, beside the connection’s other commands', async () => {
    const { engine, received } = await started();
    const cmd = engine.cmd as Redis;
    // The first publish loads the script (NOSCRIPT, then EVAL through ioredis).
    await engine.broker.publish('/direct', '{"i":0}', HISTORY);
    await eventually(() => expect(received).toHaveLength(1));
    received.length = 0;
    const evalsha = vi.spyOn(cmd, 'evalsha');
    const sendCommand = vi.spyOn(cmd, 'sendCommand');
    // Publishes of one turn interleaved with ioredis commands on the same connection.
    const calls: Promise<unknown>[] = [];
    for (let i = 1; i <= 20; i++) {
      calls.push(engine.broker.publish('/direct', `{"i":${i},"é":"ü"}`, HISTORY));
      if (i % 5 === 0) calls.push(cmd.echo(`echo ${i}`));
    }
    const results = await Promise.all(calls);
    const positions = results.filter((r) => typeof r !== 'string') as { offset: number; epoch: string }[];
    expect(positions.map((p) => p.offset)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    expect(new Set(positions.map((p) => p.epoch)).size).toBe(1);
    expect(results.filter((r) => typeof r === 'string')).toEqual(['echo 5', 'echo 10', 'echo 15', 'echo 20']);
    await eventually(() => expect(received).toHaveLength(20));
    expect(received.map((p) => JSON.parse(p.payload).i)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(received[0]?.payload).toBe('{"i":1,"é":"ü"}');
    // The ioredis commands went through ioredis; no publish did (heartbeats and probes
    // may go through ioredis meanwhile: they are other scripts and commands).
    const publishes = (args: readonly unknown[]) => args[0] === PUBLISH.sha;
    expect(evalsha.mock.calls.filter(publishes)).toEqual([]);
    const sent = sendCommand.mock.calls.map(([c]) => c as { name: string; args: unknown[] });
    expect(sent.filter((c) => c.name === 'evalsha' && publishes(c.args))).toEqual([]);
    expect(sent.filter((c) => c.name === 'echo')).toHaveLength(4);
  });

  it('loads the script again when Redis lost it (NOSCRIPT), and publishes', async () => {
    const { engine, received } = await started();
    await engine.broker.publish('/direct', '{"before":1}', HISTORY);
    await admin().script('FLUSH');
    const at = await engine.broker.publish('/direct', '{"after":1}', HISTORY);
    expect(at?.offset).toBe(2);
    await eventually(() => expect(received.map((p) => p.payload)).toEqual(['{"before":1}', '{"after":1}']));
  });

  it('fails a call not answered in time, and the replies after it still match their calls', async () => {
    const client = admin();
    const calls = new DirectScriptCalls(200);
    const keys = ['{t}:meta', '{t}:stream'];
    const args = (p: string) => [p, 10, 60_000, 60_000, 'e1', `id\n\n/t`, 'PUBLISH', '{t}'];
    expect(await calls.run(client, PUBLISH, keys, args('one'))).toEqual([1, 'e1']);
    // CLIENT PAUSE WRITE holds the script (it writes) past the timeout, until UNPAUSE.
    const pauser = admin();
    await pauser.client('PAUSE', 5000, 'WRITE');
    const late = calls.run(client, PUBLISH, keys, args('two'));
    await expect(late).rejects.toThrow('Command timed out');
    expect(calls.pending()).toBe(0);
    await pauser.client('UNPAUSE');
    // Paused scripts run once the pause is lifted, in order: the late one took offset 2, and
    // its reply, when it comes, is not taken for the next call's.
    const patient = new DirectScriptCalls(10_000);
    expect(await patient.run(client, PUBLISH, keys, args('three'))).toEqual([3, 'e1']);
    expect(await client.echo('still in step')).toBe('still in step');
  });

  it('fails the calls in flight when the connection is lost', async () => {
    const client = admin();
    const calls = new DirectScriptCalls(10_000);
    const keys = ['{u}:meta', '{u}:stream'];
    const args = (p: string) => [p, 10, 60_000, 60_000, 'e', 'id\n\n/u', 'PUBLISH', '{u}'];
    await calls.run(client, PUBLISH, keys, args('x'));
    const id = String(await client.client('ID'));
    await admin().client('PAUSE', 2000, 'WRITE');
    const lost = calls.run(client, PUBLISH, keys, args('y'));
    await admin().client('KILL', 'ID', id);
    const started = performance.now();
    await expect(lost).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(2000);
    calls.stop();
    await admin().client('UNPAUSE');
  });

  it('goes through ioredis when a client option acts per command (keyPrefix, resending)', async () => {
    const prefixed = new Redis(redis().url, { keyPrefix: 'pre:', autoResendUnfulfilledCommands: false });
    const resending = new Redis(redis().url);
    clients.push(prefixed, resending);
    const calls = new DirectScriptCalls(2000);
    for (const client of [prefixed, resending]) {
      const evalsha = vi.spyOn(client, 'evalsha');
      await client.ping();
      await calls.run(
        client,
        PUBLISH,
        ['{v}:meta', '{v}:stream'],
        ['p', 5, 60_000, 60_000, 'e', 'id\n\n/v', 'PUBLISH', '{v}'],
      );
      expect(evalsha).toHaveBeenCalledTimes(1);
    }
    expect(await admin().exists('pre:{v}:stream')).toBe(1);
    // Through the engine's own kind of client, the same call is written directly.
    const plain = admin();
    await plain.ping();
    const evalsha = vi.spyOn(plain, 'evalsha');
    await calls.run(
      plain,
      PUBLISH,
      ['{v}:meta', '{v}:stream'],
      ['q', 5, 60_000, 60_000, 'e', 'id\n\n/v', 'PUBLISH', '{v}'],
    );
    expect(evalsha).not.toHaveBeenCalled();
  });
});
