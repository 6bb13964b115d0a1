/**
 * `--heartbeat` (on by default): the lean WebSocket driver asks for Bayou's idle heartbeat
 * as `@bayou/client` does, so a `connections` run holds its sessions on the server's pings;
 * `--no-heartbeat` keeps the held-connect cycle.
 */
import { type BayouServer, createServer } from '@bayou/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import { runScenario } from '../src/runner.js';

let server: BayouServer;
let url: string;

beforeAll(async () => {
  server = await createServer({
    host: '127.0.0.1',
    port: 0,
    logger: false,
    heartbeatInterval: 200,
    maxInterval: 500,
  });
  url = `${await server.listen()}/bayeux`;
});
afterAll(async () => {
  await server?.close();
});

async function gauge(name: string): Promise<number> {
  const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(
    text
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
      ?.split(' ')[1],
  );
}

/** Runs `connections` with 20 sessions; while they are held, what the server's heartbeat wheel holds. */
async function heldOnWheel(heartbeat: boolean): Promise<number> {
  const run = runScenario('connections', {
    url,
    clients: 20,
    ramp: 1000,
    hold: 3000,
    metricsUrl: 'off',
    heartbeat,
  });
  await eventually(() => server.bayou.sessionCount === 20, 10_000, 'the 20 sessions');
  // A socket joins the wheel with the frame that bound its session: by the subscribe's reply.
  await eventually(
    async () => !heartbeat || (await gauge('bayou_heartbeat_sockets')) === 20,
    5000,
    'the wheel',
  );
  const onWheel = await gauge('bayou_heartbeat_sockets');
  const r = await run;
  expect(r.sessions).toMatchObject({ connected: 20, failed: 0, lost: 0 });
  await eventually(() => server.bayou.sessionCount === 0, 10_000, 'the sessions gone');
  return onWheel;
}

describe('bayou-loadtest --heartbeat', () => {
  it('negotiates the idle heartbeat by default, and not with --no-heartbeat', async () => {
    expect(await heldOnWheel(true)).toBe(20);
    expect(await heldOnWheel(false)).toBe(0);
  });
});
