/** Picks a driver by protocol and transport (by name, so worker threads can do it too). */
import { bayeuxLongPolling } from './bayeux-lp-driver.js';
import { bayeuxWebSocket } from './bayeux-ws-driver.js';
import type { DriverFactory } from './driver.js';
import type { Transport } from './options.js';
import { socketIo } from './socketio-driver.js';

/** `socket.io` exists for the comparison bench; the CLI speaks Bayeux. */
export type Protocol = 'bayeux' | 'socket.io';

export function driverFor(protocol: Protocol, transport: Transport): DriverFactory {
  if (protocol === 'socket.io') return socketIo;
  return transport === 'long-polling' ? bayeuxLongPolling : bayeuxWebSocket;
}
