/** Picks a driver by protocol and transport (by name, so worker threads can do it too). */
import { bayeuxLongPolling } from './bayeux-lp-driver.js';
import { bayeuxWebSocket } from './bayeux-ws-driver.js';
import type { DriverFactory } from './driver.js';
import type { Transport } from './options.js';
import { sdkDefaults, sdkPlain } from './sdk-driver.js';
import { socketIo } from './socketio-driver.js';

/**
 * `socket.io` and the two `@bayou/client` drivers exist for the comparison bench (`sdk`:
 * ack and recovery on, as the SDK ships; `sdk-plain`: both off); the CLI speaks Bayeux.
 */
export type Protocol = 'bayeux' | 'socket.io' | 'sdk' | 'sdk-plain';

export function driverFor(protocol: Protocol, transport: Transport): DriverFactory {
  if (protocol === 'socket.io') return socketIo;
  if (protocol === 'sdk') return sdkDefaults(transport);
  if (protocol === 'sdk-plain') return sdkPlain(transport);
  return transport === 'long-polling' ? bayeuxLongPolling : bayeuxWebSocket;
}
