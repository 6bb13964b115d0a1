/** What a WebSocket link keeps of the sessions it carries, on a real `ws` server link. */
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { Session } from '../session/session.js';
import { OpenLinks } from './open-links.js';
import { type LinkHost, type WebSocketLink, webSocketLinkClass } from './ws-link.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server link whose host records the sessions told their carrier closed. */
async function link(): Promise<{ link: WebSocketLink; told: Session[] }> {
  const told: Session[] = [];
  const host = {
    kernel: { connects: { carrierClosed: (s: Session) => told.push(s) } },
    keepHeaders: false,
    pings: null,
    links: new OpenLinks<WebSocketLink>(),
  } as unknown as LinkHost;
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, WebSocket: webSocketLinkClass(host) });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const linked = new Promise<WebSocketLink>((resolve) => wss.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  closers.push(async () => {
    client.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  await new Promise<void>((resolve) => client.once('open', resolve));
  return { link: await linked, told };
}

/** A session as the link sees it: alive on `carrier` until it ends or moves. */
const session = (carrier: unknown = null) =>
  ({ state: 'carried', carrier, heartbeat: false }) as unknown as Session;

it('keeps one session, then several, forgets the ended ones at the check, and tells each its carrier closed', async () => {
  const { link: l, told } = await link();
  expect(l.sessions).toEqual([]);
  const a = session(l);
  l.track([a]);
  l.track([a]);
  expect(l.sessions).toEqual([a]);
  const b = session(l);
  const c = session(l);
  l.track([b, a]);
  l.track([c]);
  expect(l.sessions).toEqual([a, b, c]);
  // b ends, c moves to another carrier: the check forgets both and keeps a alone.
  (b as { state: string }).state = 'removed';
  (c as { carrier: unknown }).carrier = {};
  expect(l.idle()).toBe(false);
  expect(l.sessions).toEqual([a]);
  (a as { state: string }).state = 'removed';
  expect(l.idle()).toBe(false);
  expect(l.sessions).toEqual([]);
  expect(l.idle()).toBe(true);
  const d = session(l);
  const e = session(l);
  l.track([d]);
  l.track([e]);
  l.closed();
  expect(told).toEqual([d, e]);
  expect(l.sessions).toEqual([]);
  const f = session(l);
  l.track([f]);
  l.closed();
  expect(told).toEqual([d, e, f]);
});
