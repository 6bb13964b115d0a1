/**
 * Admission control (issue #35 item 2): past `maxHandshakeRate` a handshake is refused with
 * retry advice and a jittered interval (and `Retry-After` on HTTP), never an error a client
 * treats as fatal; a flood is paced, not failed; sessions that exist are never refused; the
 * CometD client and `@bayou/client` both get through.
 */
import { BayouClient, longPolling, websocket } from '@bayou/client';
import type { Message } from 'cometd';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Admission } from '../src/kernel/admission.js';
import { cometdOver, disconnect } from './cometd-helpers.js';
import { type Started, startServer } from './start-server.js';
import { eventually, TestClient } from './test-client.js';

let started: Started | null = null;
afterEach(async () => {
  await started?.server.close();
  started = null;
});

describe('the handshake token bucket', () => {
  it('admits a second’s worth at once, then refuses with intervals that pace the refused at the rate', () => {
    let t = 1_000_000;
    const gate = new Admission(10, () => 0.5, t);
    const first = Array.from({ length: 10 }, () => gate.handshake(t));
    expect(first.every((r) => r === null)).toBe(true);
    const refused = Array.from({ length: 20 }, () => gate.handshake(t));
    expect(refused.every((r) => r?.args === 'handshake_rate')).toBe(true);
    // The n-th refused is told to come back at the n-th free slot (100 ms apart) plus jitter.
    const waits = refused.map((r) => r?.interval ?? 0);
    for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThan(waits[i - 1] as number);
    expect(waits[0]).toBe(150); // slot 100 ms + 0.5 × min(1000, 100)
    expect(waits[19]).toBe(2000 + 500); // slot 2 s + 0.5 × 1 s
    // A token comes back every 100 ms.
    t += 100;
    expect(gate.handshake(t)).toBeNull();
    expect(gate.handshake(t)).not.toBeNull();
  });

  it('refuses every handshake while draining; 0 admits every one', () => {
    const open = new Admission(0);
    for (let i = 0; i < 10_000; i++) expect(open.handshake()).toBeNull();
    const gate = new Admission(0, () => 0.25);
    gate.drain(1000);
    expect(gate.handshake()).toEqual({ args: 'draining', interval: 251 });
  });
});

describe('a flood of handshakes past maxHandshakeRate', () => {
  it('is paced, not failed: 503 node_busy with reconnect handshake and Retry-After; a live session is untouched', async () => {
    started = await startServer({ maxHandshakeRate: 20, timeout: 20_000 });
    const { server, base } = started;
    const stayer = new TestClient(base, 'websocket');
    expect((await stayer.connect()).successful).toBe(true);
    await stayer.subscribe('/tick');
    const floodStart = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 150 }, async () => {
        const r = await fetch(`${base}/bayeux`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify([
            { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] },
          ]),
        });
        const [reply] = (await r.json()) as Record<string, unknown>[];
        return {
          status: r.status,
          retryAfter: r.headers.get('retry-after'),
          reply: reply as Record<string, unknown>,
        };
      }),
    );
    const elapsed = (Date.now() - floodStart) / 1000;
    const accepted = answers.filter((a) => a.reply.successful === true);
    const refused = answers.filter((a) => a.reply.successful !== true);
    // One second's worth at once, then the rate.
    expect(accepted.length).toBeGreaterThanOrEqual(20);
    expect(accepted.length).toBeLessThanOrEqual(20 + Math.ceil(20 * elapsed) + 1);
    for (const a of refused) {
      expect(a.status).toBe(200);
      expect(a.reply).toMatchObject({
        error: '503:handshake_rate:node_busy',
        advice: { reconnect: 'handshake' },
      });
      const interval = (a.reply.advice as { interval: number }).interval;
      expect(Number(a.retryAfter)).toBe(Math.max(1, Math.ceil(interval / 1000)));
    }
    // The refused are told to come back spread over the time the rate needs for them.
    const intervals = refused
      .map((a) => (a.reply.advice as { interval: number }).interval)
      .sort((x, y) => x - y);
    expect(intervals.at(-1)).toBeGreaterThanOrEqual(((refused.length - 1) / 20) * 1000);
    // The session that was there: still connected, still receiving.
    server.bayou.publish('/tick', 'after the flood');
    await stayer.waitFor((m) => m.channel === '/tick');
    expect(stayer.received.some((m) => m.channel === '/meta/connect' && m.successful === false)).toBe(false);
  });

  it('lets @bayou/client (WebSocket and long-polling) and the CometD client all through', async () => {
    started = await startServer({ maxHandshakeRate: 10, timeout: 20_000 });
    const url = `${started.base}/bayeux`;
    const bayou = Array.from(
      { length: 20 },
      (_, i) =>
        new BayouClient(url, {
          WebSocket: WebSocket as never,
          transports: i % 2 === 0 ? [websocket] : [longPolling],
          minReconnectDelay: 100,
          maxReconnectDelay: 1000,
        }),
    );
    const cometd = Array.from({ length: 10 }, () => cometdOver('long-polling', url));
    const cometdIn: Message[] = [];
    const cometdRefused: Message[] = [];
    for (const c of cometd) {
      c.addListener('/meta/handshake', (m: Message) => (m.successful ? cometdIn : cometdRefused).push(m));
      c.handshake();
    }
    await Promise.all(bayou.map((c) => c.connect()));
    await eventually(() => cometdIn.length === 10, 15_000);
    // Some were refused on the way (30 handshakes against 10 a second), none for good.
    expect(started.server.bayou.stats().handshakes.failed).toBeGreaterThan(0);
    for (const m of cometdRefused) expect(m.error).toBe('503:handshake_rate:node_busy');
    for (const c of bayou) expect(c.state).toBe('connected');
    await Promise.all([...bayou.map((c) => c.disconnect()), ...cometd.map((c) => disconnect(c))]);
  });
});
