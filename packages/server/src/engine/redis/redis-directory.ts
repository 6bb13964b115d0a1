/**
 * The session directory on Redis: live nodes are the members of a sorted set scored by
 * when their heartbeat expires; a batch is forwarded over pub/sub to the owner's inbox
 * with a correlation id, and the owner publishes its reply to the sender's inbox.
 *
 * Inbox messages are JSON: `{t:'q', id, from, request}` asks, `{t:'a', id, reply}` answers,
 * `{t:'e', id, error}` says the owner failed.
 */
import type { ForwardRequest, ForwardResponse, SessionDirectory } from '../engine.js';
import type { RedisCore } from './redis-core.js';

interface Pending {
  resolve(reply: ForwardResponse): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  /** The node the batch went to. */
  to: string;
}

type InboxMessage =
  | { t: 'q'; id: string; from: string; request: ForwardRequest }
  | { t: 'a'; id: string; reply: ForwardResponse }
  | { t: 'e'; id: string; error: string };

export class RedisDirectory implements SessionDirectory {
  private readonly pending = new Map<string, Pending>();
  /** Ids found dead, until the next heartbeat says otherwise. */
  private dead = new Set<string>();
  private deadAsOf: Set<string> | null = null;
  private seq = 0;

  constructor(private readonly engine: RedisCore) {}

  /** Alive per the latest heartbeat (at most `heartbeatMs` old); an unknown id is looked up once. */
  isAlive(nodeId: string): boolean | Promise<boolean> {
    const e = this.engine;
    if (nodeId === e.node().nodeId || e.live.has(nodeId)) return true;
    if (this.deadAsOf !== e.live) {
      this.dead = new Set();
      this.deadAsOf = e.live;
    }
    if (this.dead.has(nodeId)) return false;
    return e.heartbeat().then((live) => {
      if (!live.has(nodeId)) this.dead.add(nodeId);
      return live.has(nodeId);
    });
  }

  async nodes(): Promise<string[]> {
    return [...(await this.engine.heartbeat())];
  }

  async forward(nodeId: string, request: ForwardRequest): Promise<ForwardResponse> {
    const e = this.engine;
    const self = e.node();
    if (nodeId === self.nodeId) return self.forwarded(request);
    if (!(await this.isAlive(nodeId))) throw new Error(`node ${nodeId} is not alive`);
    const id = `${self.nodeId}.${++this.seq}`;
    const reply = new Promise<ForwardResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new Error(`node ${nodeId} did not answer a forwarded batch in ${e.options.forwardTimeoutMs} ms`),
        );
      }, e.options.forwardTimeoutMs);
      this.pending.set(id, { resolve, reject, timer, to: nodeId });
    });
    // The engine may be closed (abandon) while the send below is awaited: that rejection
    // is handled by the caller of the promise returned below, not an unhandled one.
    reply.catch(() => undefined);
    try {
      const heard = await this.send(nodeId, { t: 'q', id, from: self.nodeId, request });
      if (heard === 0) throw new Error(`node ${nodeId} is not listening`);
    } catch (err) {
      this.settle(id)?.reject(err as Error);
    }
    return e.track(reply);
  }

  /** @internal A message on this node's inbox. */
  receive(message: string): void {
    let m: InboxMessage;
    try {
      m = JSON.parse(message) as InboxMessage;
    } catch {
      this.engine.stats.errors++;
      return;
    }
    if (m.t === 'q') void this.answer(m.from, m.id, m.request);
    else if (m.t === 'a') this.settle(m.id)?.resolve(m.reply);
    else if (m.t === 'e')
      this.settle(m.id)?.reject(new Error(`forwarded batch failed on its owner: ${m.error}`));
  }

  /**
   * @internal A heartbeat found these nodes alive: batches waiting on any other node will
   * never be answered (it died), so they fail now rather than at `forwardTimeoutMs`, and
   * the receiving node answers their sessions as unknown.
   */
  reap(live: ReadonlySet<string>): void {
    for (const [id, p] of [...this.pending]) {
      if (!live.has(p.to)) this.settle(id)?.reject(new Error(`node ${p.to} died with a forwarded batch`));
    }
  }

  /** @internal The engine stops: nobody will answer what is pending. */
  abandon(): void {
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(new Error('Redis engine closed'));
  }

  private async answer(from: string, id: string, request: ForwardRequest): Promise<void> {
    let out: InboxMessage;
    try {
      out = { t: 'a', id, reply: await this.engine.node().forwarded(request) };
    } catch (err) {
      out = { t: 'e', id, error: err instanceof Error ? err.message : String(err) };
    }
    await this.send(from, out).catch(() => undefined);
  }

  private settle(id: string): Pending | undefined {
    const p = this.pending.get(id);
    if (p === undefined) return undefined;
    this.pending.delete(id);
    clearTimeout(p.timer);
    return p;
  }

  private async send(nodeId: string, message: InboxMessage): Promise<number> {
    const e = this.engine;
    const topic = e.keys.inbox(nodeId);
    const text = JSON.stringify(message);
    const cmd = e.commands();
    return e.options.sharded ? ((await cmd.spublish(topic, text)) as number) : cmd.publish(topic, text);
  }
}
