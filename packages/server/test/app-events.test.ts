/**
 * The application's events as an application finds them: occupancy whenever someone
 * listens (no webhooks needed), `session:created` beside `session:removed`.
 */
import { expect, it } from 'vitest';
import { startServer } from './start-server.js';
import { eventually, TestClient } from './test-client.js';

it('fires channel:occupied and channel:vacated for a listener, without webhooks', async () => {
  const { server, base } = await startServer();
  try {
    const seen: string[] = [];
    const c = new TestClient(base, 'websocket');
    await c.connect();
    // Subscribed before anyone listened: reported when the first listener comes.
    await c.subscribe('/before');
    server.bayou.on('channel:occupied', (channel) => seen.push(`occupied ${channel}`));
    server.bayou.on('channel:vacated', (channel) => seen.push(`vacated ${channel}`));
    await eventually(() => seen.includes('occupied /before'), 5_000, 'the earlier channel reported');
    await c.subscribe('/rooms/a');
    await eventually(() => seen.includes('occupied /rooms/a'), 5_000, 'occupied');
    await c.unsubscribe('/rooms/a');
    await eventually(() => seen.includes('vacated /rooms/a'), 5_000, 'vacated');
    expect(seen.filter((s) => s.endsWith('/rooms/a'))).toEqual(['occupied /rooms/a', 'vacated /rooms/a']);
    await c.close();
  } finally {
    await server.close();
  }
});

it('names a new session session:created, as it names its end session:removed', async () => {
  const { server, base } = await startServer();
  try {
    const created: string[] = [];
    const removed: string[] = [];
    server.bayou.on('session:created', (s) => created.push(s.id));
    server.bayou.on('session:removed', (s) => removed.push(s.id));
    const c = new TestClient(base, 'long-polling');
    await c.connect();
    expect(created).toEqual([c.clientId]);
    await c.request({ channel: '/meta/disconnect', clientId: c.clientId });
    await c.close();
    await eventually(() => removed.includes(c.clientId), 5_000, 'session:removed');
  } finally {
    await server.close();
  }
});

it('gives the application a session whose auth it cannot write', async () => {
  const { server, base } = await startServer({
    authenticate: () => ({ sub: 'alice', role: 'reader' }),
  });
  try {
    const c = new TestClient(base, 'websocket');
    await c.connect();
    const session = server.bayou.session(c.clientId) as { auth: Record<string, unknown> | null };
    expect(session.auth).toEqual({ sub: 'alice', role: 'reader' });
    expect(() => {
      session.auth = { sub: 'mallory' };
    }).toThrow(TypeError);
    expect(() => {
      (session.auth as Record<string, unknown>).role = 'admin';
    }).toThrow(TypeError);
    expect(session.auth).toEqual({ sub: 'alice', role: 'reader' });
    await c.close();
  } finally {
    await server.close();
  }
});
