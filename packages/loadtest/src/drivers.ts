/** Picks a driver by protocol and transport (by name, so worker threads can do it too). */

import { bayeuxLongPolling } from './bayeux-lp-driver.js';
import { bayeuxEventSource, bayeuxStreaming } from './bayeux-stream-driver.js';
import { bayeuxWebSocket } from './bayeux-ws-driver.js';
import { browserEventSource, browserStreaming } from './browser-stream-driver.js';
import type { DriverFactory } from './driver.js';
import type { Transport } from './options.js';
import { sdkConnectAck, sdkDefaults, sdkPlain } from './sdk-driver.js';
import { socketIo } from './socketio-driver.js';

/**
 * `socket.io` and the `@bayou/client` drivers exist for the comparison bench (`sdk`: ack in
 * numbered frames and recovery on, as the SDK ships; `sdk-connect-ack`: ack in connect
 * replies as CometD does, and recovery; `sdk-plain`: both off); the CLI speaks Bayeux.
 * `bayeux-browser` is Bayeux as a browser tab sends it (node:http, a cookie jar, Chrome's
 * headers, two connections) over `streaming` or `eventsource`.
 */
export type Protocol = 'bayeux' | 'bayeux-browser' | 'socket.io' | 'sdk' | 'sdk-connect-ack' | 'sdk-plain';

const LEAN: Readonly<Record<Transport, DriverFactory>> = {
  websocket: bayeuxWebSocket,
  'long-polling': bayeuxLongPolling,
  streaming: bayeuxStreaming,
  eventsource: bayeuxEventSource,
};

export function driverFor(protocol: Protocol, transport: Transport): DriverFactory {
  if (protocol === 'socket.io') return socketIo;
  if (protocol === 'sdk') return sdkDefaults(transport);
  if (protocol === 'sdk-connect-ack') return sdkConnectAck(transport);
  if (protocol === 'sdk-plain') return sdkPlain(transport);
  if (protocol === 'bayeux-browser') {
    if (transport === 'streaming') return browserStreaming;
    if (transport === 'eventsource') return browserEventSource;
    throw new Error(`the browser-like driver speaks streaming and eventsource, not ${transport}`);
  }
  return LEAN[transport];
}
