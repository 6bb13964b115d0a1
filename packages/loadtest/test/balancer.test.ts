/**
 * The chaos cluster's balancer (`round-robin.ts`): a node
 * whose `/readyz` answers 503 gets no new request while another is ready, and gets them
 * again once it is ready — the paced drain relies on it (a draining node turns not ready
 * first), as it would on a Kubernetes Service.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import { startBalancer } from '../src/chaos/cluster-balancer.js';
import { stopAll } from '../src/chaos/cluster-processes.js';

function node(name: string, state: { ready: boolean }): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/readyz') res.writeHead(state.ready ? 200 : 503).end();
    else res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const port = (s: Server) => (s.address() as AddressInfo).port;

describe('the chaos balancer', () => {
  const servers: Server[] = [];
  afterAll(() => {
    stopAll();
    for (const s of servers) s.close();
  });

  it('sends no new request to a node that is not ready, and sends them again once it is', async () => {
    const a = { ready: true };
    const b = { ready: false };
    servers.push(await node('a', a), await node('b', b));
    // One process: what it has seen of readiness is what the requests meet (two would each
    // ask on their own schedule). The two-process balancer is the one every storm test runs.
    const balancer = await startBalancer(servers.map(port), 1);
    const ask = async () => (await fetch(`http://127.0.0.1:${balancer}/x`)).text();
    // The balancer asks every 500 ms: wait until it has seen b not ready.
    await eventually(
      async () => {
        const names = await Promise.all(Array.from({ length: 8 }, ask));
        return names.every((n) => n === 'a');
      },
      10_000,
      'b passed over',
      100,
    );
    const names = await Promise.all(Array.from({ length: 20 }, ask));
    expect(names.every((n) => n === 'a')).toBe(true);
    b.ready = true;
    await eventually(
      async () => (await Promise.all(Array.from({ length: 8 }, ask))).includes('b'),
      10_000,
      'b back',
      100,
    );
  });
});
