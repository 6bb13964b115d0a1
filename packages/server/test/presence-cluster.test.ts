/**
 * Presence across three nodes on one real Redis, behind the round-robin balancer: members
 * of every node are listed everywhere, joins and leaves reach followers on every node, and
 * the members of a node that dies are reported left once, within the liveness bound, by
 * the node that noticed.
 */
import { BayouClient, longPolling, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  type Cluster,
  disconnectAll,
  eventually,
  redisPerFile,
  requireRedis,
  startCluster,
} from './cluster-helpers.js';
import { presenceAuth, token } from './presence-helpers.js';

requireRedis('presence in a Redis cluster');

interface Event {
  action: 'join' | 'leave';
  member: { clientId: string; user: string | null };
}

const redis = redisPerFile();
const clients: BayouClient[] = [];
let cluster: Cluster | null = null;

afterEach(async () => {
  await disconnectAll(clients);
  await cluster?.close();
  cluster = null;
});

function client(url: string, user: string, transport: 'websocket' | 'long-polling'): BayouClient {
  const c = new BayouClient(url, {
    transports: [transport === 'websocket' ? websocket : longPolling],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    token: () => token({ sub: user }),
    minReconnectDelay: 50,
    maxReconnectDelay: 200,
  });
  clients.push(c);
  c.connect().catch(() => undefined);
  return c;
}

function follow(c: BayouClient, channel: string): { events: Event[]; ready: Promise<void> } {
  const events: Event[] = [];
  const s = c.subscribe(`/presence${channel}`, (m) => events.push(m.data as Event));
  return { events, ready: s.ready };
}

describe('presence on a 3-node Redis cluster', () => {
  it('lists members of every node on every node, through the balancer', async () => {
    cluster = await startCluster(redis(), 3, { auth: presenceAuth, trustClientSession: true });
    const c = cluster;
    const members = c.nodes.map((n, i) => client(`${n.base}/bayeux`, `user${i}`, 'websocket'));
    await Promise.all(members.map((m) => m.subscribe('/chat/all', () => undefined).ready));
    const asker = client(c.url, 'asker', 'long-polling');
    const answer = await asker.request<{ members: { user: string }[] }>('/service/presence', {
      channel: '/chat/all',
    });
    expect(answer.members.map((m) => m.user).sort()).toEqual(['user0', 'user1', 'user2']);
  });

  it('reports the members of a killed node left on the other nodes, once, within the liveness bound', async () => {
    cluster = await startCluster(redis(), 3, { auth: presenceAuth, trustClientSession: true });
    const c = cluster;
    const [n0, n1, n2] = c.nodes as [Cluster['nodes'][0], Cluster['nodes'][0], Cluster['nodes'][0]];
    const watchers = [
      client(`${n0.base}/bayeux`, 'w0', 'websocket'),
      client(`${n1.base}/bayeux`, 'w1', 'websocket'),
    ];
    const follows = watchers.map((w) => follow(w, '/chat/kill'));
    await Promise.all(follows.map((f) => f.ready));
    const doomed = client(`${n2.base}/bayeux`, 'doomed', 'websocket');
    await doomed.subscribe('/chat/kill', () => undefined).ready;
    await eventually(() => {
      for (const f of follows) expect(f.events.map((e) => e.action)).toEqual(['join']);
    });
    const doomedId = follows[0]?.events[0]?.member.clientId;
    expect(doomedId).toBeDefined();
    const killedAt = Date.now();
    await c.kill(n2);
    await eventually(() => {
      for (const f of follows) expect(f.events.map((e) => e.action)).toEqual(['join', 'leave']);
    }, 5000);
    const noticedIn = Date.now() - killedAt;
    // nodeTtlMs 1000 + heartbeatMs 100 in the cluster helpers, and the announcement's trip.
    expect(noticedIn).toBeLessThan(2500);
    for (const f of follows) expect(f.events[1]?.member.clientId).toBe(doomedId);
    // Exactly once: a later join on the same path arrives after no second leave.
    const late = client(`${n0.base}/bayeux`, 'late', 'long-polling');
    await late.subscribe('/chat/kill', () => undefined).ready;
    await eventually(() => {
      for (const f of follows) expect(f.events.map((e) => e.action)).toEqual(['join', 'leave', 'join']);
    });
    const listed = await watchers[0]?.request<{ members: { user: string }[] }>('/service/presence', {
      channel: '/chat/kill',
    });
    expect(listed?.members.map((m) => m.user)).toEqual(['late']);
  });

  it('announces the members of a node taken for dead (a stall) left, then joined again when it is back', async () => {
    cluster = await startCluster(redis(), 3, { auth: presenceAuth, trustClientSession: true });
    const c = cluster;
    const [n0, , n2] = c.nodes as [Cluster['nodes'][0], Cluster['nodes'][0], Cluster['nodes'][0]];
    const watcher = client(`${n0.base}/bayeux`, 'w', 'websocket');
    const f = follow(watcher, '/chat/stall');
    await f.ready;
    const staller = client(`${n2.base}/bayeux`, 'staller', 'websocket');
    await staller.subscribe('/chat/stall', () => undefined).ready;
    await eventually(() => expect(f.events.map((e) => e.action)).toEqual(['join']));
    const stalled = n2.server.bayou.nodeId;
    // As if node 2 had stalled past nodeTtlMs: its liveness is in the past when node 0's
    // heartbeat runs (tried again should node 2's own heartbeat slip in between).
    await eventually(async () => {
      await n2.engine.commands().zadd(n2.engine.keys.nodes, 0, stalled);
      await n0.engine.heartbeat();
      expect(f.events.map((e) => e.action)).toContain('leave');
    }, 5000);
    // Node 2's next heartbeat finds itself gone: it writes its member again and says so.
    await eventually(() => expect(f.events.map((e) => e.action)).toEqual(['join', 'leave', 'join']));
    const listed = await watcher.request<{ members: { user: string }[] }>('/service/presence', {
      channel: '/chat/stall',
    });
    expect(listed.members.map((m) => m.user)).toEqual(['staller']);
  });
});
