import { describe, expect, it } from 'vitest';
import { DEMO_PATTERN, demoSymbol } from '../src/index.js';
import { startServer } from './start-server.js';
import { eventually, TestClient } from './test-client.js';

describe('demo feed', () => {
  it('produces /demo/prices records only for watched symbols, at the configured rate', async () => {
    const { server, base } = await startServer({ demoFeed: { symbols: 100, rate: 20 }, providerLinger: 100 });
    expect(DEMO_PATTERN).toBe('/demo/prices/*');
    expect([demoSymbol(0), demoSymbol(1), demoSymbol(27)]).toEqual(['AAA', 'AAB', 'ABB']);
    expect(server.bayou.recordImage('/demo/prices/AAA')).toBeNull();
    const c = new TestClient(base, 'websocket');
    await c.connect();
    await c.subscribe('/demo/prices/AAB');
    const snapshot = await c.waitFor((m) => m.channel === '/demo/prices/AAB');
    expect(Object.keys(snapshot.data as object).sort()).toEqual([
      'ask',
      'bid',
      'change',
      'last',
      'time',
      'volume',
    ]);
    const { bid, ask } = snapshot.data as { bid: number; ask: number };
    expect(ask).toBeGreaterThan(bid);
    await eventually(() => c.deliveries('/demo/prices/AAB').length >= 5, 3000);
    expect(server.bayou.recordImage('/demo/prices/AAA')).toBeNull(); // nobody watches it
    await c.unsubscribe('/demo/prices/AAB');
    await c.close();
    await server.close();
  });

  it('honours rates above one update per timer tick', async () => {
    const { server, base } = await startServer({ demoFeed: { symbols: 10, rate: 100 } });
    const c = new TestClient(base, 'websocket');
    await c.connect();
    await c.subscribe('/demo/prices/AAC');
    await c.waitFor((m) => m.channel === '/demo/prices/AAC');
    const start = c.deliveries('/demo/prices/AAC').length;
    const startedAt = Date.now();
    // 100/s nominal; a 50 ms timer with one update per tick would cap it at 20: 41 take 2 s.
    await eventually(() => c.deliveries('/demo/prices/AAC').length - start > 40, 5000, '41 updates', 5);
    expect(Date.now() - startedAt).toBeLessThan(1000);
    const prices = ['AAA', 'AAB'].map((s) => server.bayou.recordImage(`/demo/prices/${s}`));
    expect(prices).toEqual([null, null]);
    await c.close();
    await server.close();
  });
});
