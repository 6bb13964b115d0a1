/**
 * What the server API remembers is bounded: the clientIds of sessions it ended (so a late
 * connect of theirs is told `reconnect: none`) are forgotten after `maxInterval` +
 * `timeout`, the longest a client may take to come back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { operationsOf } from '../src/kernel/node-operations.js';
import { type Started, startServer } from './start-server.js';
import { eventually, TestClient } from './test-client.js';

let started: Started | null = null;
afterEach(async () => {
  await started?.server.close();
  started = null;
});

describe('sessions ended by the server API', () => {
  it('are told not to reconnect, and forgotten once their client could no longer come back', async () => {
    started = await startServer({ timeout: 100, maxInterval: 200, sweepInterval: 20 });
    const node = operationsOf(started.server.app);
    const a = new TestClient(started.base, 'long-polling');
    await a.connect();
    expect(node.admin.run({ op: 'disconnect', target: { clientId: a.clientId } })).toBe(1);
    expect(node.admin.rememberedCount).toBe(1);
    const late = await a.request({
      channel: '/meta/connect',
      clientId: a.clientId,
      connectionType: 'long-polling',
    });
    expect(late).toMatchObject({
      successful: false,
      error: '402::session_unknown',
      advice: { reconnect: 'none' },
    });
    await a.close();

    // Past maxInterval + timeout the entry is stale; the next one pushes it out.
    await eventually(() => !node.admin.kicked(a.clientId), 2000);
    const b = new TestClient(started.base, 'long-polling');
    await b.connect();
    expect(node.admin.run({ op: 'disconnect', target: { clientId: b.clientId } })).toBe(1);
    expect(node.admin.rememberedCount).toBe(1);
    const unknown = await new TestClient(started.base, 'long-polling').request({
      channel: '/meta/connect',
      clientId: a.clientId,
      connectionType: 'long-polling',
    });
    expect(unknown).toMatchObject({ advice: { reconnect: 'handshake' } });
    await b.close();
  });
});
