/**
 * The node-to-node layer: one request/reply path between the nodes of a cluster, written
 * once above the broker's publish (each node follows its own inbox channel, `/~node/<id>`,
 * which also carries direct deliveries). It carries
 *
 * - long-poll batches a node received for a session another node owns (`forward`, used by
 *   `cluster/poll-forwarding.ts` and the relayed stream), answered with the HTTP reply;
 * - the server API's and the console's operations (`ask`, `askAll`): list a node's
 *   channels, end or unsubscribe a user's sessions, read a node's figures.
 *
 * Any engine whose broker carries a channel between nodes carries it: the Engine contract
 * has no forwarding of its own. A request fails when its node is not alive, when that node
 * is found dead while it waits (checked every `livenessMs`), or after its timeout.
 *
 * Inbox messages are `{ ctl: 'q', id, from, request }` (ask) and `{ ctl: 'a', id, result }`
 * / `{ ctl: 'e', id, error }` (answer).
 */
import type { HistoryPolicy, MaybePromise } from '../engine/engine.js';

/** A batch received by one node for a session another node owns (always run as a long-poll's). */
export interface ForwardRequest {
  /** The raw JSON text of the batch. */
  readonly body: string;
  /** Request facts the owner's hooks may read. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly remoteAddress: string | undefined;
  readonly browserId: string | null;
  /** When the batch reached the node that forwards it (`arrivalStamp`): attempts of one connect in order. */
  readonly arrivedAt?: number;
}

/** The owner's answer, relayed as the HTTP response. */
export interface ForwardResponse {
  readonly status: number;
  readonly body: string;
}

/** Runs a batch another node forwarded (the long-polling transport's), or `null` without long-polling. */
export type ForwardHandler = (request: ForwardRequest) => Promise<ForwardResponse>;

/** What a node answers about itself. */
export interface NodeInfo {
  nodeId: string;
  sessions: number;
  /** Seconds since this node started. */
  uptime: number;
}

/** Who an action applies to: every session of `user` (a token's `sub`), or one session. */
export type Target = { user: string } | { clientId: string };

export type ControlOp =
  | { op: 'info' }
  /** The operator's console: this node's figures (`admin/node-stats.ts`). */
  | { op: 'stats' }
  | { op: 'channels'; limit: number }
  | { op: 'disconnect'; target: Target }
  | { op: 'unsubscribe'; target: Target; channel: string }
  /** Answer the held long-poll of a session now (the node relaying it shuts down). */
  | { op: 'release'; clientId: string }
  /** Hand a session over now (a WebSocket for it opened on the asking node). */
  | { op: 'handover'; clientId: string }
  /** Put deliveries back ahead of a session's queue: the client of the batch they answered went away. */
  | { op: 'requeue'; clientId: string; messages: string[] };

/** What travels between nodes: an operation, or a forwarded batch. */
export type NodeRequest = ControlOp | { op: 'forward'; request: ForwardRequest };

/** The node's side: the cluster as the broker and the directory see it, and its own operations. */
export interface NodeLinkHost {
  readonly nodeId: string;
  /** Live node ids (this one included). */
  nodes(): Promise<string[]>;
  isAlive(nodeId: string): MaybePromise<boolean>;
  /** Publishes `payload` on `channel` through the engine's broker. */
  send(channel: string, payload: string, history: HistoryPolicy): MaybePromise<unknown>;
  /** The inbox channel of `nodeId`. */
  inboxOf(nodeId: string): string;
  /** Runs an operation on this node's own sessions. */
  run(request: ControlOp): unknown;
}

export interface NodeLinkTimes {
  /** ms an operation may wait for its answer. Default 3000. */
  readonly askMs?: number;
  /** ms a forwarded batch may wait (a long-poll connect is held up to the server's `timeout`). */
  readonly forwardMs: number;
  /** Period of the liveness check of the nodes requests wait on. Default 1000. */
  readonly livenessMs?: number;
}

type InboxMessage =
  | { ctl: 'q'; id: string; from: string; request: NodeRequest }
  | { ctl: 'a'; id: string; result: unknown }
  | { ctl: 'e'; id: string; error: string };

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  /** The node asked. */
  to: string;
}

/**
 * A forwarded batch waits the server's `timeout` (its connect may be held that long) and
 * this much more for its owner's reply.
 */
export const FORWARD_MARGIN_MS = 15_000;

const NO_HISTORY: HistoryPolicy = { size: 0, ttlMs: 0 };

/** One node's answer, or why there is none. */
export type Answer<T> = { nodeId: string; result: T } | { nodeId: string; error: string };

export class NodeLink {
  /** Requests waiting for their answer: each leaves on its answer, its timeout, its node's death or `close`. */
  private readonly pending = new Map<string, Pending>();
  private seq = 0;
  private watch: NodeJS.Timeout | null = null;
  private readonly askMs: number;
  private readonly forwardMs: number;
  private readonly livenessMs: number;

  constructor(
    private readonly host: NodeLinkHost,
    times: NodeLinkTimes,
  ) {
    this.askMs = times.askMs ?? 3000;
    this.forwardMs = times.forwardMs;
    this.livenessMs = times.livenessMs ?? 1000;
  }

  /** Whether an inbox payload belongs to this path (the others are direct deliveries). */
  static owns(payload: string): boolean {
    return payload.startsWith('{"ctl":');
  }

  /** Requests waiting now (for the bound's test). */
  get waiting(): number {
    return this.pending.size;
  }

  /** Runs `request` on `nodeId` (this node directly), resolving with its result. */
  ask<T>(nodeId: string, request: ControlOp): Promise<T> {
    if (nodeId === this.host.nodeId) return Promise.resolve().then(() => this.host.run(request) as T);
    return this.request(nodeId, request, this.askMs, 'answer') as Promise<T>;
  }

  /** Hands a long-poll batch to the node that owns its session; resolves with its reply. */
  forward(nodeId: string, request: ForwardRequest): Promise<ForwardResponse> {
    return this.request(
      nodeId,
      { op: 'forward', request },
      this.forwardMs,
      'answer a forwarded batch',
    ) as Promise<ForwardResponse>;
  }

  /** Runs `request` on every live node; a node that fails or is silent is reported with its error. */
  async askAll<T>(request: ControlOp): Promise<Answer<T>[]> {
    const nodes = await this.host.nodes();
    return Promise.all(
      nodes.map((nodeId) =>
        this.ask<T>(nodeId, request).then(
          (result): Answer<T> => ({ nodeId, result }),
          (err: unknown): Answer<T> => ({ nodeId, error: (err as Error).message }),
        ),
      ),
    );
  }

  /**
   * A message of this path arrived in this node's inbox; `forwarded` runs a batch another
   * node forwarded here (`null` without long-polling: answered 503).
   */
  receive(payload: string, forwarded: ForwardHandler | null): void {
    let m: InboxMessage;
    try {
      m = JSON.parse(payload) as InboxMessage;
    } catch {
      return;
    }
    if (m.ctl === 'q') void this.answer(m.from, m.id, m.request, forwarded);
    else if (m.ctl === 'a') this.settle(m.id)?.resolve(m.result);
    else if (m.ctl === 'e') this.settle(m.id)?.reject(new Error(m.error));
  }

  /** The node stops: nothing pending will be answered. */
  close(): void {
    if (this.watch !== null) clearTimeout(this.watch);
    this.watch = null;
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(new Error('node closing'));
  }

  private async request(
    nodeId: string,
    request: NodeRequest,
    timeoutMs: number,
    what: string,
  ): Promise<unknown> {
    if (!(await this.host.isAlive(nodeId))) throw new Error(`node ${nodeId} is not alive`);
    const id = `${this.host.nodeId}.${++this.seq}`;
    const answer = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(id);
        reject(new Error(`node ${nodeId} did not ${what} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer, to: nodeId });
    });
    answer.catch(() => undefined);
    this.watchLiveness();
    const message: InboxMessage = { ctl: 'q', id, from: this.host.nodeId, request };
    try {
      await this.host.send(this.host.inboxOf(nodeId), JSON.stringify(message), NO_HISTORY);
    } catch (err) {
      this.settle(id)?.reject(err as Error);
    }
    return answer;
  }

  private async answer(
    from: string,
    id: string,
    request: NodeRequest,
    forwarded: ForwardHandler | null,
  ): Promise<void> {
    let out: InboxMessage;
    try {
      const result =
        request.op !== 'forward'
          ? await this.host.run(request)
          : forwarded === null
            ? { status: 503, body: '[]' }
            : await forwarded(request.request);
      out = { ctl: 'a', id, result };
    } catch (err) {
      out = { ctl: 'e', id, error: (err as Error).message };
    }
    try {
      await this.host.send(this.host.inboxOf(from), JSON.stringify(out), NO_HISTORY);
    } catch {
      // The asker times out on its own.
    }
  }

  /**
   * While requests wait, their nodes are checked every `livenessMs`: one found dead fails
   * its requests now (its sessions are answered as unknown) rather than at the timeout.
   */
  private watchLiveness(): void {
    if (this.watch !== null) return;
    this.watch = setTimeout(() => {
      this.watch = null;
      void this.reap().finally(() => {
        if (this.pending.size > 0) this.watchLiveness();
      });
    }, this.livenessMs);
    this.watch.unref();
  }

  private async reap(): Promise<void> {
    const targets = new Set([...this.pending.values()].map((p) => p.to));
    for (const nodeId of targets) {
      let alive: boolean;
      try {
        alive = await this.host.isAlive(nodeId);
      } catch {
        continue;
      }
      if (alive) continue;
      for (const [id, p] of [...this.pending])
        if (p.to === nodeId) this.settle(id)?.reject(new Error(`node ${nodeId} died with a request pending`));
    }
  }

  private settle(id: string): Pending | undefined {
    const p = this.pending.get(id);
    if (p === undefined) return undefined;
    this.pending.delete(id);
    clearTimeout(p.timer);
    return p;
  }
}
