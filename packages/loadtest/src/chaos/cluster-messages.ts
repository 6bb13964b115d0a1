/** What the cluster chaos run and its client worker processes say to each other over IPC. */

export interface WorkerClient {
  /** Index of the client in the whole run. */
  index: number;
  transport: 'websocket' | 'long-polling';
  rooms: number[];
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
  /** Clients of a dead node that never received again. */
  unrecovered: number;
  /** The first few losses, to find them in the servers' logs. */
  losses: { client: number; transport: string; room: number; seq: number; clientIds: string[] }[];
}

export type ToWorker =
  | { type: 'start'; url: string; prefix: string; clients: WorkerClient[] }
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
