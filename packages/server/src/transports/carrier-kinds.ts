/**
 * What each transport's carrier can do (`session/carrier.ts`): the only place a
 * connection type's name meets its capabilities. The kernel, the extensions and the
 * session read the capabilities; a new transport declares its kind here and lives in its
 * own file.
 */
import type { CarrierKind, ConnectionTypes } from '../session/carrier.js';

/** A WebSocket: both ways, frames pushed as flushed, its client connects on it now and then. */
export const WEBSOCKET_CARRIER: CarrierKind = Object.freeze({
  name: 'websocket',
  pushes: true,
  keepsSession: false,
  unidirectional: false,
  numberedFrames: true,
  opensWithConnect: true,
  browserBound: false,
  pings: true,
});

/** A POST answered once: deliveries leave in the answer to a held connect. */
export const LONG_POLLING_CARRIER: CarrierKind = Object.freeze({
  name: 'long-polling',
  pushes: false,
  keepsSession: false,
  unidirectional: false,
  numberedFrames: false,
  opensWithConnect: true,
  browserBound: true,
  pings: false,
});

/**
 * Bayou HTTP streaming (docs/streaming.md): a held response opened by a connect; the rest on
 * POSTs. Opened by a POST, so bound to its browser's cookie as a long-poll is.
 */
export const STREAMING_CARRIER: CarrierKind = Object.freeze({
  name: 'streaming',
  pushes: true,
  keepsSession: true,
  unidirectional: true,
  numberedFrames: true,
  opensWithConnect: true,
  browserBound: true,
  pings: false,
});

/** Faye's EventSource: a held `GET <path>/<clientId>`; its connects come on POSTs, answered at once. */
export const EVENT_SOURCE_CARRIER: CarrierKind = Object.freeze({
  name: 'eventsource',
  pushes: true,
  keepsSession: true,
  unidirectional: true,
  numberedFrames: false,
  opensWithConnect: false,
  browserBound: false,
  pings: false,
});

const BY_NAME: ReadonlyMap<unknown, CarrierKind> = new Map(
  [WEBSOCKET_CARRIER, LONG_POLLING_CARRIER, STREAMING_CARRIER, EVENT_SOURCE_CARRIER].map((k) => [k.name, k]),
);

/** The kind a connect's `connectionType` names, if a transport declares it. */
export const connectionTypes: ConnectionTypes = (name) => BY_NAME.get(name);
