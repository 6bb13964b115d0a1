/** What the cluster chaos run and its client worker processes say to each other over IPC. */
import type { ChaosTransport } from './client-transports.js';

export interface WorkerClient {
  /** Index of the client in the whole run. */
  index: number;
  transport: ChaosTransport;
  rooms: number[];
}

/** What one client missed in one room. */
export interface Loss {
  client: number;
  transport: string;
  room: number;
  lost: number;
  /** The first and last seq missed. */
  first: number;
  last: number;
  /** `gap` events the client was told. */
  gaps: number;
  /** Its sessions, in order (one per successful handshake). */
  clientIds: string[];
  /** At the end: its connection state, the transport in use, the room's subscription status. */
  state: string;
  /** The last subscribe reply it got (JSON, for the servers' logs). */
  lastSubscribeReply: string;
  /** When (Date.now()) the last message of the room arrived. */
  lastReceivedAt: number;
  /** Since its node last went down: ms since then and what happened. */
  timeline: string[];
}

/** The run's verdict on one worker's clients. */
export interface WorkerResult {
  clients: number;
  expected: number;
  delivered: number;
  lost: number;
  duplicated: number;
  /** Deliveries of messages whose publish was not acknowledged (not counted as anything else). */
  unacknowledged: number;
  gaps: number;
  /** Clients not `connected` at the end. */
  stranded: number;
  /** ms from a node's death to each of its clients receiving again on its new session. */
  recoveries: number[];
  /** The same, of the long-polling clients only. */
  recoveriesLongPolling: number[];
  /**
   * ms from a node's death to a moved client being connected again after its connection was
   * cut (a WebSocket reopened elsewhere; a long-poll that only waits out its advised interval
   * shows no such moment), of those counted in `recoveries`.
   */
  reconnections: number[];
  /** The slowest recoveries (over 15 s), to look into. */
  slow: {
    client: number;
    transport: string;
    at: number;
    ms: number;
    clientIds: string[];
    timeline: string[];
  }[];
  /** Clients of a dead node that never received again. */
  unrecovered: number;
  /** The first few clients that lost messages, per room: to find them in the servers' logs. */
  losses: Loss[];
  /**
   * Latency (arrival − publish time, ms) of the messages received by clients whose node
   * had not gone down: `[tenth of a second since the epoch, ms, count]` (the storm's stayers).
   */
  stayerLatency: [number, number, number][];
  /** Successful handshakes: `[tenth of a second since the epoch, count]`. */
  handshakes: [number, number][];
  /** From the storm's probe worker (a few clients apart from the loaded workers, `storm.ts`). */
  probe: boolean;
  /** The worker's event-loop delay, the longest each second: `[second since the epoch, ms]`. */
  loopDelay: [number, number][];
}

export type ToWorker =
  | {
      type: 'start';
      url: string;
      prefix: string;
      clients: WorkerClient[];
      /** No node-down notices will come: a new session after the first marks the client down since its last message. */
      sessionLoss: boolean;
      /** The storm's probe worker. */
      probe?: boolean;
    }
  | { type: 'node-down'; nodeId: string; at: number }
  /** Publishing is over: these seqs per room were acknowledged; say `complete` once every client has them. */
  | { type: 'expect'; accepted: number[][] }
  | { type: 'finish' };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'tick'; delivered: number; connected: number }
  | { type: 'complete' }
  | { type: 'result'; result: WorkerResult }
  | { type: 'failed'; message: string };
