/**
 * `chaos --balancer nginx` (`src/chaos/nginx-balancer.ts`): the run's own nginx sends
 * requests and WebSocket upgrades round-robin to every node, and once a node's `/readyz`
 * answers 503 it reloads with that node out of the upstream list — no new request goes
 * there, while a WebSocket it already holds stays open — and takes it back once it is ready.
 * Then a bounded storm through it: a drained node's clients move with nothing lost.
 * nginx missing fails these tests (the run needs it; `npm test` installs it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { eventually } from '../../../scripts/eventually.mjs';
import { runClusterChaos } from '../src/chaos/cluster-chaos.js';
import { redisServerPath } from '../src/chaos/cluster-processes.js';
import { NginxBalancer, nginxConfig, workerConnections } from '../src/chaos/nginx-balancer.js';

const ci = process.env.CI === 'true' || process.env.CI === '1';

/** A node: answers its name, `/readyz` by `state`, and a WebSocket that echoes `name:<text>`. */
function node(name: string, state: { ready: boolean }): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/readyz') res.writeHead(state.ready ? 200 : 503).end();
    else res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (d) => ws.send(`${name}:${d.toString()}`)));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const portOf = (s: Server) => (s.address() as AddressInfo).port;

function openSocket(url: string): Promise<{ ws: WebSocket; ask: (text: string) => Promise<string> }> {
  const ws = new WebSocket(url);
  const ask = (text: string) =>
    new Promise<string>((resolve) => {
      ws.once('message', (d) => resolve(d.toString()));
      ws.send(text);
    });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, ask }));
    ws.once('error', reject);
  });
}

describe('the nginx configuration', () => {
  it('lists the ready nodes only (all when none is), passes upgrades, buffers nothing, retries only a failed connection', () => {
    const text = nginxConfig({
      port: 9000,
      nodes: [1, 2, 3],
      ready: new Set([1, 3]),
      dir: '/d',
      root: false,
    });
    expect(text.match(/server 127\.0\.0\.1:\d+/g)).toEqual(['server 127.0.0.1:1', 'server 127.0.0.1:3']);
    for (const line of [
      'proxy_set_header Upgrade $http_upgrade;',
      'proxy_set_header Connection $connection_upgrade;',
      'proxy_buffering off;',
      'proxy_next_upstream error;',
      'listen 127.0.0.1:9000',
    ])
      expect(text).toContain(line);
    expect(text).not.toMatch(/ip_hash|hash |sticky/);
    expect(text).toContain(`worker_connections ${workerConnections()};`);
    const none = nginxConfig({ port: 9000, nodes: [1, 2], ready: new Set(), dir: '/d', root: false });
    expect(none.match(/server 127\.0\.0\.1:\d+/g)).toEqual(['server 127.0.0.1:1', 'server 127.0.0.1:2']);
  });

  it('gives each worker as many connections as the open files nginx inherits allow', () => {
    const dir = mkdtempSync(join(tmpdir(), 'limits-'));
    const file = join(dir, 'limits');
    writeFileSync(
      file,
      'Limit  Soft Limit  Hard Limit  Units\nMax open files            20000                20000                files\n',
    );
    expect(workerConnections(file)).toBe(19_936);
    expect(workerConnections(join(dir, 'none'))).toBe(1024);
    rmSync(dir, { recursive: true });
  });
});

describe('nginx as the chaos balancer', () => {
  const servers: Server[] = [];
  let nginx: NginxBalancer | null = null;
  afterEach(async () => {
    await nginx?.stop();
    nginx = null;
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      s.close();
    }
  });

  it('routes to every node, and sends no new request to a node that turns not ready, keeping what it holds', async () => {
    const states = [{ ready: true }, { ready: true }, { ready: true }];
    servers.push(...(await Promise.all(states.map((st, i) => node(`n${i}`, st)))));
    nginx = await NginxBalancer.start(servers.map(portOf), 100);
    const base = `http://127.0.0.1:${nginx.port}`;
    // A new connection each time: one kept alive to an old worker would still route by the old list.
    const ask = () =>
      new Promise<string>((resolve, reject) => {
        get(`${base}/x`, { agent: false }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
    const names = async (n: number) => Promise.all(Array.from({ length: n }, ask));
    expect(new Set(await names(12))).toEqual(new Set(['n0', 'n1', 'n2']));
    // WebSockets through nginx to each node: each nginx worker takes the nodes in turn, and
    // one of its two workers gets at least 3 of 6 connections.
    const sockets = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(() => openSocket(`ws://127.0.0.1:${nginx?.port}/ws`)),
    );
    const owners = await Promise.all(sockets.map(async (s) => (await s.ask('hi')).split(':')[0]));
    expect(new Set(owners)).toEqual(new Set(['n0', 'n1', 'n2']));

    (states[1] as { ready: boolean }).ready = false;
    await eventually(async () => nginx?.upstream.length === 2, 10_000, 'n1 seen not ready', 20);
    // The reload is done once the old workers take no new connection (they keep what they hold).
    await nginx.settled();
    expect(new Set(await names(20))).toEqual(new Set(['n0', 'n2']));
    const upgraded = await Promise.all(
      [0, 1, 2, 3].map(() => openSocket(`ws://127.0.0.1:${nginx?.port}/ws`)),
    );
    expect((await Promise.all(upgraded.map((s) => s.ask('new')))).some((a) => a.startsWith('n1'))).toBe(
      false,
    );
    // The WebSocket n1 held before still goes there.
    const held = sockets[owners.indexOf('n1')];
    expect(await held?.ask('still')).toBe('n1:still');

    (states[1] as { ready: boolean }).ready = true;
    await eventually(async () => nginx?.reloads === 2, 10_000, 'n1 seen ready again', 20);
    await nginx.settled();
    // Each of the two workers takes the three nodes in turn: 9 new connections reach n1.
    expect(await names(9)).toContain('n1');
    for (const s of [...sockets, ...upgraded]) s.ws.terminate();
  });
});

describe.runIf(redisServerPath() !== null || ci)('a storm through nginx', () => {
  it('drains one node of two behind nginx: its clients move to the other, nothing lost or duplicated', async () => {
    const r = await runClusterChaos({
      nodes: 2,
      clients: 20,
      transport: 'mixed',
      rooms: 2,
      roomsPerClient: 1,
      rate: 10,
      duration: 5000,
      killEvery: 0,
      restart: 'kill',
      redisRestartAt: 0,
      drainMs: 15_000,
      workers: 1,
      seed: 5,
      prefix: '/storm-nginx/',
      logDir: '',
      target: '',
      apiKey: '',
      storm: 'drain',
      stormAt: 1500,
      probePercent: 0,
      balancer: 'nginx',
    });
    expect({ lost: r.lost, duplicated: r.duplicated, stranded: r.stranded }).toEqual({
      lost: 0,
      duplicated: 0,
      stranded: 0,
    });
    // Round-robin put clients on both nodes: some moved, not all.
    expect(r.storm?.moved).toBeGreaterThan(0);
    expect(r.storm?.moved).toBeLessThan(20);
    expect(r.recovery.unrecovered).toBe(0);
  });
});
