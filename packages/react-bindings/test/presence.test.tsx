/**
 * `usePresence` over the real stack: `@bayou/client` on an in-process `@bayou/server` that
 * keeps presence on `/room/*`. The component shows who is in the room as users come and go,
 * and the server's refusal of a room the user may not read.
 */
import { BayouClient, type WebSocketConstructor } from '@bayou/client';
import { type BayouServer, createServer } from '@bayou/server';
import type { ReactNode } from 'react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually } from '../../../scripts/eventually.mjs';
import { BayouProvider, usePresence } from '../src/index.js';
import { mount, realScheduling } from './render.js';

let server: BayouServer;
let url: string;
const clients: BayouClient[] = [];

async function as(user: string): Promise<BayouClient> {
  const c = new BayouClient(url, {
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    handshake: { user },
  });
  clients.push(c);
  await c.connect();
  return c;
}

function Who({ channel }: { channel: string }): ReactNode {
  const { members, ready, error } = usePresence(channel);
  const names = members.map((m) => m.user).sort();
  return (
    <span id="who">{error ? `error ${error.message}` : ready ? names.join(',') || 'nobody' : 'loading'}</span>
  );
}

beforeAll(async () => {
  realScheduling();
  server = await createServer({
    host: '127.0.0.1',
    port: 0,
    authenticate: (message) => ({ sub: (message.ext as { user?: string } | undefined)?.user }),
    auth: {
      channels: {
        rules: [
          { pattern: '/room/*', presence: true },
          { pattern: '/private/*', subscribe: 'nobody', presence: true },
        ],
      },
    },
  });
  url = `${await server.listen()}/bayeux`;
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined);
});
afterAll(() => server?.close());

const text = (el: HTMLElement) => el.querySelector('#who')?.textContent;

describe('usePresence with @bayou/client and @bayou/server', () => {
  it('shows who is in a channel and re-renders on joins and leaves', async () => {
    const viewer = await as('viewer');
    const { container, unmount } = await mount(
      <BayouProvider client={viewer}>
        <Who channel="/room/1" />
      </BayouProvider>,
    );
    await eventually(() => text(container) === 'nobody', 5000, 'the empty list');
    const ada = await as('ada');
    const adaIn = ada.subscribe('/room/1', () => undefined);
    await eventually(() => text(container) === 'ada', 5000, 'ada to join');
    const bob = await as('bob');
    bob.subscribe('/room/1', () => undefined);
    await eventually(() => text(container) === 'ada,bob', 5000, 'bob to join');
    adaIn.unsubscribe();
    await eventually(() => text(container) === 'bob', 5000, 'ada to leave');
    await unmount();
    await eventually(
      () => server.bayou.subscriberCount('/presence/room/1') === 0,
      5000,
      'the last follower to go',
    );
  });

  it('shows the refusal of a channel the user may not read', async () => {
    const eve = await as('eve');
    const { container } = await mount(
      <BayouProvider client={eve}>
        <Who channel="/private/plans" />
      </BayouProvider>,
    );
    await eventually(() => text(container)?.startsWith('error') === true, 5000, 'the refusal');
    expect(text(container)).toContain('403');
  });
});
