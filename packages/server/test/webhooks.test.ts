/**
 * Webhooks against a real HTTP receiver (memory engine, one node): signed batches of
 * session and channel occupancy events, and no event lost while the receiver is down.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type BayouServer, createServer } from '../src/index.js';
import { eventually } from './interop-helpers.js';
import { presenceAuth, token } from './presence-helpers.js';
import { TestClient } from './test-client.js';
import { WebhookReceiver } from './webhook-receiver.js';

const SECRET = 'webhook-test-secret';

let server: BayouServer | null = null;
let receiver: WebhookReceiver | null = null;
const clients: TestClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await server?.close();
  await receiver?.stop();
  server = null;
  receiver = null;
});

async function start(
  webhooks: Record<string, unknown> = {},
  more: Record<string, unknown> = {},
): Promise<{ base: string; hooks: WebhookReceiver }> {
  const hooks = new WebhookReceiver(SECRET);
  await hooks.start();
  receiver = hooks;
  server = await createServer({
    host: '127.0.0.1',
    port: 0,
    webhooks: { url: hooks.url, secret: SECRET, batchWindow: 20, ...webhooks },
    ...more,
  });
  return { base: await server.listen(), hooks };
}

async function client(
  base: string,
  transport: 'websocket' | 'long-polling' = 'websocket',
): Promise<TestClient> {
  const c = new TestClient(base, transport);
  clients.push(c);
  await c.connect();
  return c;
}

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  if (m === null) throw new Error(`no ${name} in /metrics`);
  return Number(m[1]);
}

describe('webhooks', () => {
  it('POSTs signed batches of session, occupied and vacated events, once per transition', async () => {
    const { base, hooks } = await start({ headers: { authorization: 'Bearer receiver-key' } });
    const a = await client(base, 'websocket');
    const b = await client(base, 'long-polling');
    await a.subscribe('/room/1');
    await b.subscribe('/room/1');
    await b.subscribe('/room/*');
    await eventually(() => hooks.unique('channel.occupied').length === 1);
    await a.unsubscribe('/room/1');
    await b.unsubscribe('/room/1');
    await eventually(() => hooks.unique('channel.vacated').length === 1);
    await b.request({ channel: '/meta/disconnect', clientId: b.clientId });
    await eventually(() => hooks.unique('session.disconnected').length === 1);

    expect(hooks.posts.length).toBeGreaterThan(0);
    expect(hooks.posts.every((p) => p.valid)).toBe(true);
    expect(hooks.posts[0]?.headers).toMatchObject({
      authorization: 'Bearer receiver-key',
      'content-type': 'application/json',
    });
    const events = hooks.unique();
    expect(events.map((e) => e.type)).toEqual([
      'session.connected',
      'session.connected',
      'channel.occupied',
      'channel.vacated',
      'session.disconnected',
    ]);
    expect(events.slice(0, 2).map((e) => e.clientId)).toEqual([a.clientId, b.clientId]);
    expect(events[2]).toMatchObject({ channel: '/room/1' });
    expect(events[3]).toMatchObject({ channel: '/room/1' });
    expect(events[4]).toMatchObject({ clientId: b.clientId, reason: 'disconnect' });
    for (const e of events) {
      expect(typeof e.id).toBe('string');
      expect(Math.abs(e.at - Date.now())).toBeLessThan(60_000);
    }
    // A wildcard subscription occupies no channel; a tampered body fails the check.
    expect(events.some((e) => e.channel === '/room/*')).toBe(false);
    const first = hooks.posts[0] as { body: string; signature: string };
    expect(hooks.verify(`${first.body} `, first.signature)).toBe(false);
  });

  it('loses no event while the receiver is down for 10 s: retried with backoff, then delivered', async () => {
    const { base, hooks } = await start({ maxRetryDelay: 2000 });
    await hooks.stop();
    const downAt = Date.now();
    const down: TestClient[] = [];
    for (let i = 0; i < 20; i++) down.push(await client(base));
    await Promise.all(down.map((c, i) => c.subscribe(`/down/${i % 5}`)));
    // Down for at least 10 s, and the server saw its POSTs fail meanwhile.
    await eventually(
      async () =>
        Date.now() - downAt >= 10_000 && (await metric(base, 'bayou_webhook_posts_failed_total')) >= 3,
      15_000,
    );
    expect(hooks.posts).toHaveLength(0);
    await hooks.start();
    await eventually(() => hooks.unique('session.connected').length === 20, 10_000);
    await eventually(() => hooks.unique('channel.occupied').length === 5, 5_000);
    expect(new Set(hooks.unique('session.connected').map((e) => e.clientId))).toEqual(
      new Set(down.map((c) => c.clientId)),
    );
    expect(hooks.posts.every((p) => p.valid)).toBe(true);
    expect(await metric(base, 'bayou_webhook_events_dropped_total')).toBe(0);
    expect(await metric(base, 'bayou_webhook_events_sent_total')).toBe(25);
  }, 40_000);

  it("reports presence joins and leaves with the member's user, and the user of sessions", async () => {
    const { base, hooks } = await start({}, { auth: presenceAuth, trustClientSession: true });
    const c = new TestClient(base, 'websocket');
    clients.push(c);
    expect((await c.connect({ auth: { token: await token({ sub: 'ada' }) } })).successful).toBe(true);
    expect((await c.subscribe('/chat/room')).successful).toBe(true);
    await eventually(() => hooks.unique('presence.join').length === 1);
    expect((await c.unsubscribe('/chat/room')).successful).toBe(true);
    await eventually(() => hooks.unique('presence.leave').length === 1);
    const member = { channel: '/chat/room', clientId: c.clientId, user: 'ada' };
    expect(hooks.unique('presence.join')[0]).toMatchObject(member);
    expect(hooks.unique('presence.leave')[0]).toMatchObject(member);
    expect(hooks.unique('session.connected')[0]).toMatchObject({ clientId: c.clientId, user: 'ada' });
  });

  it('sends a batch again when its answer comes too late: at least once, the same ids to de-duplicate on', async () => {
    const { base, hooks } = await start({ timeout: 200, maxRetryDelay: 500 });
    hooks.stall = 1;
    hooks.stallMs = 1000;
    const a = await client(base);
    const b = await client(base);
    await eventually(() => hooks.posts.length >= 2);
    await eventually(() => hooks.unique('session.connected').length === 2);
    const ids = hooks.events.map((e) => e.id);
    // The stalled POST was received and is received again: every event twice, under one id each.
    expect(ids.length).toBeGreaterThan(new Set(ids).size);
    expect(hooks.unique('session.connected').map((e) => e.clientId)).toEqual([a.clientId, b.clientId]);
    expect(await metric(base, 'bayou_webhook_posts_failed_total')).toBeGreaterThanOrEqual(1);
    expect(await metric(base, 'bayou_webhook_events_dropped_total')).toBe(0);
  });

  it('delivers, on a graceful shutdown, the ends of its sessions and the channels they vacated', async () => {
    const { base, hooks } = await start({ batchWindow: 60_000 });
    const c = await client(base, 'long-polling');
    await c.subscribe('/room/closing');
    expect(hooks.posts).toHaveLength(0); // held by the long batch window
    await server?.close();
    server = null;
    const types = hooks.unique().map((e) => e.type);
    expect(types).toEqual([
      'session.connected',
      'channel.occupied',
      'session.disconnected',
      'channel.vacated',
    ]);
    expect(hooks.unique('session.disconnected')[0]).toMatchObject({
      clientId: c.clientId,
      reason: 'shutdown',
    });
  });

  it('drops and counts events past maxQueued instead of growing without bound', async () => {
    const { base, hooks } = await start({ maxQueued: 3, maxRetryDelay: 500 });
    await hooks.stop();
    for (let i = 0; i < 5; i++) await client(base);
    expect(await metric(base, 'bayou_webhook_events_dropped_total')).toBe(2);
    expect(await metric(base, 'bayou_webhook_events_queued')).toBe(3);
    await hooks.start();
    await eventually(() => hooks.unique('session.connected').length === 3, 10_000);
    expect(hooks.unique().map((e) => e.clientId)).toEqual(clients.slice(2).map((c) => c.clientId));
  }, 20_000);
});
