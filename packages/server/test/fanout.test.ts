/**
 * Fan-out: every subscriber of one channel receives every message, in order, none lost —
 * 1,000 WebSocket sessions and 200 long-polling sessions.
 */
import { describe, expect, it } from 'vitest';
import { startServer } from './start-server.js';
import { eventually, TestClient, type Transport } from './test-client.js';

async function fanOut(transport: Transport, sessions: number, messages: number): Promise<void> {
  const s = await startServer({ timeout: 5000 });
  const clients: TestClient[] = [];
  try {
    for (let i = 0; i < sessions; i += 50) {
      const batch = Array.from(
        { length: Math.min(50, sessions - i) },
        () => new TestClient(s.base, transport),
      );
      await Promise.all(batch.map((c) => c.connect()));
      await Promise.all(batch.map((c) => c.subscribe('/fan/out')));
      clients.push(...batch);
    }
    expect(s.server.bayou.subscriberCount('/fan/out')).toBe(sessions);
    for (let i = 0; i < messages; i++) {
      s.server.bayou.publish('/fan/out', { seq: i });
      // Spread the publishes over several turns, as real traffic arrives.
      if (i % 10 === 9) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => clients.every((c) => c.deliveries('/fan').length >= messages), 60_000);
    const expected = Array.from({ length: messages }, (_, i) => i);
    for (const c of clients)
      expect(c.deliveries('/fan').map((m) => (m.data as { seq: number }).seq)).toEqual(expected);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await s.server.close();
  }
}

describe('fan-out', () => {
  it('delivers 100 messages in order to each of 1,000 WebSocket sessions', async () => {
    await fanOut('websocket', 1000, 100);
  }, 90_000);

  it('delivers 100 messages in order to each of 200 long-polling sessions', async () => {
    await fanOut('long-polling', 200, 100);
  }, 90_000);
});
