/**
 * The chaos chat, bounded: real @bayou/client instances, connections killed every few
 * hundred ms, some held down past maxInterval (their sessions expire, recovery replays
 * from history); every message of every room must arrive exactly once.
 */
import { createServer } from '@bayou/server';
import { describe, expect, it } from 'vitest';
import { runChaos } from '../src/chaos/chaos-run.js';

describe.each(['websocket', 'long-polling', 'streaming'] as const)('chaos chat over %s', (transport) => {
  it('loses and duplicates nothing while connections die and sessions expire', async () => {
    const server = await createServer({ host: '127.0.0.1', port: 0, maxInterval: 1500, timeout: 3000 });
    const base = await server.listen();
    try {
      const result = await runChaos({
        url: `${base}/bayeux`,
        transport,
        clients: 60,
        rooms: 10,
        roomsPerClient: 3,
        rate: 100,
        duration: 8000,
        // The publisher waits for each reply; with 60 long-polling clients in this process
        // its loop is nearly saturated (event-loop utilization ~0.9), and on a loaded machine
        // 8 s carried as few as 40 messages. The run goes on until 150 went out.
        minPublished: 150,
        chaosInterval: 250,
        outageFraction: 0.25,
        outageMs: 2500,
        drainMs: 8000,
        seed: 7,
        prefix: '/chaos/',
      });
      expect(result.kills).toBeGreaterThan(10);
      expect(result.outages).toBeGreaterThan(0);
      expect(result.published).toBeGreaterThanOrEqual(150);
      expect({ lost: result.lost, duplicated: result.duplicated, stranded: result.stranded }).toEqual({
        lost: 0,
        duplicated: 0,
        stranded: 0,
      });
      // Every client ended on the transport it was limited to (none fell back).
      expect(result.onTransport).toEqual({ [transport]: 60 });
    } finally {
      await server.close();
    }
  }, 60_000);
});
