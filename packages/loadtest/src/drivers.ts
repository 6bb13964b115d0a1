/** Picks a driver by protocol and transport (by name, so worker threads can do it too). */
import { bayeuxLongPolling } from './bayeux-lp-driver.js';
import { bayeuxWebSocket } from './bayeux-ws-driver.js';
import type { DriverFactory } from './driver.js';
import type { Transport } from './options.js';
import { sdkConnectAck, sdkDefaults, sdkPlain } from './sdk-driver.js';
import { socketIo } from './socketio-driver.js';

/**
 * `socket.io` and the `@bayou/client` drivers exist for the comparison bench (`sdk`: ack in
 * numbered frames and recovery on, as the SDK ships; `sdk-connect-ack`: ack in connect
 * replies as CometD does, and recovery; `sdk-plain`: both off); the CLI speaks Bayeux.
 */
export type Protocol = 'bayeux' | 'socket.io' | 'sdk' | 'sdk-connect-ack' | 'sdk-plain';

export function driverFor(protocol: Protocol, transport: Transport): DriverFactory {
  if (protocol === 'socket.io') return socketIo;
  if (protocol === 'sdk') return sdkDefaults(transport);
  if (protocol === 'sdk-connect-ack') return sdkConnectAck(transport);
  if (protocol === 'sdk-plain') return sdkPlain(transport);
  return transport === 'long-polling' ? bayeuxLongPolling : bayeuxWebSocket;
}
