/**
 * Cluster-wide administrative actions (the server API): a small request/answer path over
 * the per-node inbox channel the engine already carries (`app.bayou.deliver` uses it).
 * A node asks one node, or every live node, to run an operation on its own sessions —
 * list its channels, end a user's sessions, unsubscribe them — and gathers the answers.
 *
 * Inbox messages of this path are `{ ctl: 'q', id, from, op, args }` (ask) and
 * `{ ctl: 'a', id, result }` / `{ ctl: 'e', id, error }` (answer).
 */
import type { HistoryPolicy, MaybePromise } from '../engine/engine.js';

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
  | { op: 'unsubscribe'; target: Target; channel: string };

/** The node's side: runs an operation on its own sessions. */
export interface ControlHost {
  readonly nodeId: string;
  /** Live node ids (this one included). */
  nodes(): Promise<string[]>;
  /** Publishes `payload` on `channel` through the engine. */
  send(channel: string, payload: string, history: HistoryPolicy): MaybePromise<unknown>;
  /** The inbox channel of `nodeId`. */
  inboxOf(nodeId: string): string;
  run(request: ControlOp): unknown;
}

type InboxMessage =
  | { ctl: 'q'; id: string; from: string; request: ControlOp }
  | { ctl: 'a'; id: string; result: unknown }
  | { ctl: 'e'; id: string; error: string };

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

const NO_HISTORY: HistoryPolicy = { size: 0, ttlMs: 0 };

/** One node's answer, or why there is none. */
export type Answer<T> = { nodeId: string; result: T } | { nodeId: string; error: string };

export class ClusterControl {
  private readonly pending = new Map<string, Pending>();
  private seq = 0;

  constructor(
    private readonly host: ControlHost,
    private readonly timeoutMs = 3000,
  ) {}

  /** Whether an inbox payload belongs to this path (the others are direct deliveries). */
  static owns(payload: string): boolean {
    return payload.startsWith('{"ctl":');
  }

  /** Runs `request` on `nodeId` (this node directly), resolving with its result. */
  async ask<T>(nodeId: string, request: ControlOp): Promise<T> {
    if (nodeId === this.host.nodeId) return this.host.run(request) as T;
    const id = `${this.host.nodeId}.${++this.seq}`;
    const answer = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`node ${nodeId} did not answer in ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
    });
    answer.catch(() => undefined);
    const message: InboxMessage = { ctl: 'q', id, from: this.host.nodeId, request };
    try {
      await this.host.send(this.host.inboxOf(nodeId), JSON.stringify(message), NO_HISTORY);
    } catch (err) {
      this.settle(id)?.reject(err as Error);
    }
    return answer as Promise<T>;
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

  /** A message of this path arrived in this node's inbox. */
  receive(payload: string): void {
    let m: InboxMessage;
    try {
      m = JSON.parse(payload) as InboxMessage;
    } catch {
      return;
    }
    if (m.ctl === 'q') void this.answer(m.from, m.id, m.request);
    else if (m.ctl === 'a') this.settle(m.id)?.resolve(m.result);
    else if (m.ctl === 'e') this.settle(m.id)?.reject(new Error(m.error));
  }

  /** The node stops: nothing pending will be answered. */
  close(): void {
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(new Error('node closing'));
  }

  private async answer(from: string, id: string, request: ControlOp): Promise<void> {
    let out: InboxMessage;
    try {
      out = { ctl: 'a', id, result: await this.host.run(request) };
    } catch (err) {
      out = { ctl: 'e', id, error: (err as Error).message };
    }
    try {
      await this.host.send(this.host.inboxOf(from), JSON.stringify(out), NO_HISTORY);
    } catch {
      // The asker times out on its own.
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
