/**
 * Three `bayou start --redis` processes (presence on `/chat/*`, from a config file) behind
 * the round-robin balancer; the node holding a member is killed with SIGKILL. The watchers
 * on the two other nodes are told it left, once, within the liveness bound (`nodeTtlMs` +
 * `heartbeatMs`), and the member list read through the balancer no longer has it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BayouClient, longPolling, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { disconnectAll, eventually, redisPerFile, requireRedis } from './cluster-helpers.js';
import { presenceAuth, token } from './presence-helpers.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';

requireRedis('presence on bayou processes killed with SIGKILL');

const cli = resolve(import.meta.dirname, '../dist/cli.js');
const redis = redisPerFile();
const children: ChildProcess[] = [];
const clients: BayouClient[] = [];
let balancer: RoundRobinBalancer | null = null;
const HEARTBEAT_MS = 200;
const NODE_TTL_MS = 1500;

afterEach(async () => {
  await disconnectAll(clients);
  await balancer?.close();
  balancer = null;
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function node(url: string, config: string): Promise<{ child: ChildProcess; port: number }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('BAYOU_') && k !== 'PORT') env[k] = v;
  const child = spawn(
    'node',
    [cli, 'start', '--port', '0', '--redis', url, '--config', config, '--log-level', 'warn'],
    {
      env,
    },
  );
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const port = await eventually(() => {
    const m = /listening on https?:\/\/[^:]+:(\d+)/.exec(out);
    if (m === null) throw new Error(`not listening yet: ${out}`);
    return Number(m[1]);
  }, 20_000);
  return { child, port };
}

function client(url: string, user: string, transport: 'websocket' | 'long-polling'): BayouClient {
  const c = new BayouClient(url, {
    transports: [transport === 'websocket' ? websocket : longPolling],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    token: () => token({ sub: user }),
    // The balancer still sends some requests to the dead node: retry at once.
    minReconnectDelay: 50,
    maxReconnectDelay: 200,
  });
  clients.push(c);
  c.connect().catch(() => undefined);
  return c;
}

describe('presence when a bayou process is killed with SIGKILL', () => {
  it('reports its member left on the other nodes, once, within the liveness bound', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bayou-presence-'));
    const config = join(dir, 'bayou.json');
    writeFileSync(
      config,
      JSON.stringify({
        ...presenceAuth,
        trustClientSession: true,
        redisEngine: {
          keyPrefix: `presence-kill-${process.pid}:`,
          heartbeatMs: HEARTBEAT_MS,
          nodeTtlMs: NODE_TTL_MS,
        },
      }),
    );
    const nodes = await Promise.all([0, 1, 2].map(() => node(redis().url, config)));
    balancer = await RoundRobinBalancer.start(nodes.map((n, i) => ({ name: `node${i}`, port: n.port })));
    const direct = (i: number) => `http://127.0.0.1:${nodes[i]?.port}/bayeux`;

    const events: { action: string; member: { user: string } }[][] = [[], []];
    const watchers = [0, 1].map((i) => client(direct(i), `watcher${i}`, 'websocket'));
    await Promise.all(
      watchers.map(
        (w, i) =>
          w.subscribe('/presence/chat/kill', (m) => events[i]?.push(m.data as (typeof events)[0][0])).ready,
      ),
    );
    const doomed = client(direct(2), 'doomed', 'websocket');
    await doomed.subscribe('/chat/kill', () => undefined).ready;
    await eventually(() => {
      for (const e of events) expect(e.map((x) => `${x.action} ${x.member.user}`)).toEqual(['join doomed']);
    });

    const killedAt = Date.now();
    nodes[2]?.child.kill('SIGKILL');
    await eventually(() => {
      for (const e of events) expect(e.map((x) => x.action)).toEqual(['join', 'leave']);
    }, 10_000);
    const reportedIn = Date.now() - killedAt;
    // The bound: a dead node's liveness expires after nodeTtlMs, noticed by the next heartbeat.
    expect(reportedIn).toBeLessThan(NODE_TTL_MS + HEARTBEAT_MS + 1000);

    // Exactly once: a later join on the same path comes after no second leave.
    const late = client(`${balancer.base}/bayeux`, 'late', 'websocket');
    await late.subscribe('/chat/kill', () => undefined).ready;
    await eventually(() => {
      for (const e of events)
        expect(e.map((x) => `${x.action} ${x.member.user}`)).toEqual([
          'join doomed',
          'leave doomed',
          'join late',
        ]);
    });
    const listed = await late.request<{ members: { user: string }[] }>('/service/presence', {
      channel: '/chat/kill',
    });
    expect(listed.members.map((m) => m.user)).toEqual(['late']);
    console.log(
      `presence SIGKILL: member reported left ${reportedIn} ms after the kill (nodeTtlMs ${NODE_TTL_MS}, heartbeatMs ${HEARTBEAT_MS})`,
    );
  });
});
