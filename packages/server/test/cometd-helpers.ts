/**
 * The official CometD JavaScript client (`cometd@9`, run in Node by `cometd-nodejs-client`)
 * for the suites that drive the server with it: a client limited to one transport and
 * promise forms of its callbacks. Importing this module installs the adapter's globals
 * (`window`, XMLHttpRequest, WebSocket), so only CometD suites import it.
 */
import { CometD, type Message, type SubscriptionHandle } from 'cometd';
import { adapt } from 'cometd-nodejs-client';
import { type Transport, within } from './interop-helpers.js';

adapt();

export const REPLY_MS = 5000;

/** A CometD client that can only use `transport`. */
export function cometdOver(transport: Transport, url: string): CometD {
  const cometd = new CometD();
  for (const type of cometd.getTransportTypes()) if (type !== transport) cometd.unregisterTransport(type);
  cometd.configure({
    url,
    logLevel: 'warn',
    // Retry quickly when the server goes away (default 1 s, growing). Everything else
    // stays at CometD's defaults, including appendMessageTypeToURL: long-polling posts
    // to <path>/handshake, <path>/connect and <path>/.
    backoffIncrement: 100,
  });
  return cometd;
}

/** Handshakes, with `fields` (e.g. `{ ext: … }`) merged into the handshake message. */
export function handshake(cometd: CometD, fields?: object): Promise<Message> {
  return within(
    new Promise((resolve) =>
      fields === undefined ? cometd.handshake(resolve) : cometd.handshake(fields, resolve),
    ),
    REPLY_MS,
    'handshake reply',
  );
}

export function subscribe(
  cometd: CometD,
  channel: string,
  onMessage: (m: Message) => void,
): Promise<{ reply: Message; handle: SubscriptionHandle }> {
  return within(
    new Promise((resolve) => {
      const handle = cometd.subscribe(channel, onMessage, (reply) => resolve({ reply, handle }));
    }),
    REPLY_MS,
    `subscribe reply for ${channel}`,
  );
}

export function publish(cometd: CometD, channel: string, data: unknown): Promise<Message> {
  return within(
    new Promise((resolve) => cometd.publish(channel, data, resolve)),
    REPLY_MS,
    `publish reply on ${channel}`,
  );
}

/** Disconnects unless already disconnected, giving up after `REPLY_MS`. */
export async function disconnect(cometd: CometD): Promise<void> {
  if (cometd.isDisconnected()) return;
  await within(new Promise((resolve) => cometd.disconnect(resolve)), REPLY_MS, 'disconnect').catch(
    () => undefined,
  );
}
