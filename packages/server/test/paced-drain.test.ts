/**
 * The paced drain (issue #35 item 1): `close()` first turns the node not ready and refuses
 * new handshakes with retry advice, then ends its sessions spread over `drainSpread`, each
 * advised to handshake again after a random interval, what was queued going out first.
 */
import { describe, expect, it } from 'vitest';
import { startServer } from './start-server.js';
import { eventually, type Msg, TestClient } from './test-client.js';

const SESSIONS = 120;
const SPREAD = 600; // 120 sessions × 5 ms: the whole window is used

describe('paced drain', () => {
  it('turns not ready, then ends the sessions over drainSpread with random intervals, queues first', async () => {
    const { server, base } = await startServer({ timeout: 20_000, drainSpread: SPREAD });
    const clients = Array.from({ length: SESSIONS }, () => new TestClient(base, 'websocket'));
    await Promise.all(clients.map((c) => c.connect()));
    await Promise.all(clients.map((c) => c.waitFor((m) => m.channel === '/meta/connect')));
    const listeners = clients.slice(0, 20);
    await Promise.all(listeners.map((c) => c.subscribe('/news')));
    await eventually(() => server.bayou.stats().sessions === SESSIONS);
    for (let n = 0; n < 3; n++) server.bayou.publish('/news', { n });

    const start = Date.now();
    const ended: number[] = [];
    const refusals = clients.map((c) =>
      c
        .waitFor((m) => m.channel === '/meta/connect' && m.successful === false)
        .then((m) => {
          ended.push(Date.now() - start);
          return m;
        }),
    );
    const closing = server.close();
    // At once: not ready, and a new session is refused with retry advice (not a fatal error).
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    const late = new TestClient(base, 'long-polling');
    const refused = await late.handshake();
    expect(refused).toMatchObject({ successful: false, error: '503:draining:node_busy' });
    expect(refused.advice).toMatchObject({ reconnect: 'handshake' });
    expect((refused.advice as { interval: number }).interval).toBeGreaterThan(0);

    const replies: Msg[] = await Promise.all(refusals);
    await closing;
    const took = Date.now() - start;
    for (const r of replies) {
      expect(r).toMatchObject({ error: '402::session_unknown', advice: { reconnect: 'handshake' } });
    }
    // Spread over the window, not a wall: the first soon, the last near its end, and no
    // 100 ms of it ending more than twice its share.
    ended.sort((a, b) => a - b);
    expect(ended[0]).toBeLessThan(150);
    expect(ended.at(-1)).toBeGreaterThanOrEqual(SPREAD * 0.75);
    expect(took).toBeLessThan(SPREAD + 2000);
    const share = (SESSIONS * 100) / SPREAD;
    for (let t = 0; t < SPREAD; t += 100) {
      const inBucket = ended.filter((e) => e >= t && e < t + 100).length;
      expect(inBucket, `ended in [${t}, ${t + 100}) ms`).toBeLessThanOrEqual(share * 2);
    }
    // Randomized intervals, within the jitter (the window, at most a second).
    const intervals = replies.map((r) => (r.advice as { interval: number }).interval);
    expect(new Set(intervals).size).toBeGreaterThan(SESSIONS / 2);
    for (const i of intervals) expect(i).toBeGreaterThanOrEqual(1);
    for (const i of intervals) expect(i).toBeLessThanOrEqual(SPREAD);
    // What was queued went out before the 402, in order.
    for (const c of listeners) {
      const news = c.received.filter((m) => m.channel === '/news');
      expect(news.map((m) => (m.data as { n: number }).n)).toEqual([0, 1, 2]);
      const at402 = c.received.findIndex((m) => m.channel === '/meta/connect' && m.successful === false);
      for (const m of news) expect(c.received.indexOf(m)).toBeLessThan(at402);
    }
    // Each WebSocket is closed (1001) after its 402.
    await eventually(() => clients.every((c) => c.closedWith !== null));
    expect(new Set(clients.map((c) => c.closedWith))).toEqual(new Set([1001]));
  });
});
