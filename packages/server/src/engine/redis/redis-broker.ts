/**
 * Broker and history on Redis. A publish is one script (offset, stream append, publish on
 * every name that matches the channel: the channel itself and its `/*`, `/**` ancestors),
 * so its cost is bounded by the channel's depth, never by subscribers or nodes. A node
 * subscribes only to the names its sessions need; when several of them match, the copies
 * share the publication's id and the node delivers the first one only.
 *
 * Wire form of a publication: `id\nflag\nchannel\noffset\nepoch\npayload` (flag `r` for a
 * record update, the W3C `traceparent` of a traced publish, empty otherwise; offset and
 * epoch empty without history). Ids, flags, channel names and epochs never contain a newline.
 */
import { expandChannel, isTraceparent, isWildcard } from '@bayou/protocol';
import type { Redis } from 'ioredis';
import {
  type Broker,
  type HistoryPolicy,
  NODE_INBOX_PREFIX,
  type Publication,
  type StreamPosition,
} from '../engine.js';
import { isReady } from './redis-connections.js';
import type { RedisCore } from './redis-core.js';
import { DeliveryGate } from './redis-delivery.js';
import { DirectScriptCalls } from './redis-direct-call.js';
import { newEpoch, RedisHistory } from './redis-history.js';
import { ReplicaWait } from './redis-replicas.js';
import { PUBLISH, PUBLISH_RECORD, type RedisClient, runScript } from './redis-scripts.js';
import { type Corkable, TurnBatcher } from './redis-turns.js';

/** How many recent publication ids a node remembers to drop duplicate copies. */
const RECENT_IDS = 512;

/** Splits a wire publication; null when it is not one. */
export function decodePublication(message: string): { id: string; publication: Publication } | null {
  const cuts: number[] = [];
  let at = -1;
  for (let i = 0; i < 5; i++) {
    at = message.indexOf('\n', at + 1);
    if (at < 0) return null;
    cuts.push(at);
  }
  const [a, b, c, d, e] = cuts as [number, number, number, number, number];
  const offset = message.slice(c + 1, d);
  const publication: Publication = {
    channel: message.slice(b + 1, c),
    payload: message.slice(e + 1),
    position: offset === '' ? null : { offset: Number(offset), epoch: message.slice(d + 1, e) },
    ...(b === a + 1 ? {} : flagged(message.slice(a + 1, b))),
  };
  return { id: message.slice(0, a), publication };
}

/** What a non-empty flag says: a record update, or a traced publish's `traceparent`. */
function flagged(flag: string): { record: true } | { trace: string } | Record<string, never> {
  if (flag === 'r') return { record: true };
  return isTraceparent(flag) ? { trace: flag } : {};
}

export class RedisBroker implements Broker {
  /** Names this node needs, with how many times each was subscribed. */
  private readonly interest = new Map<string, number>();
  /** Names whose SUBSCRIBE is not confirmed yet. */
  private readonly pending = new Map<string, Promise<void>>();
  private readonly recent = new Set<string>();
  /** @internal Holds live publications while a catch-up is due (`redis-engine.ts` at a drop). */
  readonly gate: DeliveryGate;
  private readonly turns: TurnBatcher;
  private readonly replicas: ReplicaWait;
  /** The publish script's calls, written beside ioredis' queue (`redis-direct-call.ts`). */
  private readonly calls: DirectScriptCalls;
  private seq = 0;
  /** A catch-up put off until the command connection is on the subscriber's server: the names it reports if lost. */
  private deferred: string[] | null = null;
  /** The catch-up from history under way, if any (the last of those queued). */
  private catching: Promise<void> | null = null;
  /** The subscriber connection's resubscribe after a reconnect, until its catch-up is done or put off. */
  private resubscribing: Promise<void> | null = null;
  /** `<nodeId>.`: how this node's own publication ids start. */
  private own = '';

  constructor(private readonly engine: RedisCore) {
    this.gate = new DeliveryGate(() => engine.node());
    this.turns = new TurnBatcher(engine.options.batchWindowMs, (p) => this.gate.accept(p));
    const o = engine.options;
    this.replicas = new ReplicaWait(o.replicaAcks, o.replicaAckTimeoutMs, (p) => engine.track(p), o.redis);
    this.calls = new DirectScriptCalls(o.commandTimeoutMs);
  }

  async publish(
    channel: string,
    payload: string,
    history: HistoryPolicy,
    trace?: string,
  ): Promise<StreamPosition | null> {
    const e = this.engine;
    const cmd = e.commands();
    if (!this.listening(cmd)) {
      throw new Error('the subscriber connection to Redis is reconnecting or catching up: publish refused');
    }
    const keep = history.size > 0 && history.ttlMs > 0;
    const names = expandChannel(channel);
    const topics = e.options.sharded ? [e.keys.topic(channel)] : names.map((n) => e.keys.topic(n));
    const header = this.header(trace ?? '', channel, names);
    const replicated = this.replicas.after(cmd);
    const reply = (await e.track(
      this.calls.run(
        cmd,
        PUBLISH,
        [e.keys.meta(channel), e.keys.stream(channel)],
        [
          payload,
          keep ? history.size : 0,
          keep ? history.ttlMs : 0,
          e.options.epochTtlMs,
          newEpoch(),
          header,
          e.options.sharded ? 'SPUBLISH' : 'PUBLISH',
          ...topics,
        ],
      ),
    )) as [number | string, string];
    const position = reply[0] === '' ? null : { offset: Number(reply[0]), epoch: reply[1] };
    if (position !== null)
      e.historyBound.wrote(channel, Math.max(history.ttlMs, e.options.epochTtlMs), Date.now());
    if (e.options.sharded) {
      // The wildcard names live on other shards: one more round trip, still bounded.
      const message = `${header}\n${position?.offset ?? ''}\n${position?.epoch ?? ''}\n${payload}`;
      await this.spread(cmd, names.slice(1), message);
    }
    if (replicated !== null) await replicated;
    return position;
  }

  async publishRecord(subject: string, fields: string): Promise<void> {
    const e = this.engine;
    const cmd = e.commands();
    const delta = JSON.parse(fields) as unknown;
    if (typeof delta !== 'object' || delta === null || Array.isArray(delta)) {
      throw new TypeError('record fields must be a serialized object');
    }
    const pairs: string[] = [];
    for (const [k, v] of Object.entries(delta)) pairs.push(k, JSON.stringify(v ?? null));
    const names = expandChannel(subject);
    const topics = e.options.sharded ? [e.keys.topic(subject)] : names.map((n) => e.keys.topic(n));
    const header = this.header('r', subject, names);
    const verb = e.options.sharded ? 'SPUBLISH' : 'PUBLISH';
    const replicated = this.replicas.after(cmd);
    await e.track(
      runScript(
        cmd,
        PUBLISH_RECORD,
        [e.keys.image(subject)],
        [header, fields, verb, topics.length, ...topics, ...pairs],
      ),
    );
    if (e.options.sharded) await this.spread(cmd, names.slice(1), `${header}\n\n\n${fields}`);
    if (replicated !== null) await replicated;
  }

  async recordImage(subject: string): Promise<Record<string, unknown> | null> {
    const e = this.engine;
    const hash = await e.track(e.commands().hgetall(e.keys.image(subject)));
    const fields = Object.entries(hash);
    if (fields.length === 0) return null;
    return Object.fromEntries(fields.map(([k, v]) => [k, JSON.parse(v) as unknown]));
  }

  async dropRecord(subject: string): Promise<void> {
    const e = this.engine;
    await e.track(e.commands().del(e.keys.image(subject)));
  }

  subscribe(name: string): Promise<void> | undefined {
    this.engine.node();
    const n = this.interest.get(name) ?? 0;
    this.interest.set(name, n + 1);
    if (n === 0 && !name.startsWith(NODE_INBOX_PREFIX))
      this.engine.followed?.(this.engine.keys.topic(name), true);
    let pending = this.pending.get(name);
    if (n > 0 && pending === undefined) return undefined;
    if (pending === undefined) {
      // Later subscribers of the same name wait for the same confirmation.
      const p = this.engine.track(this.listen([this.engine.keys.topic(name)])).finally(() => {
        if (this.pending.get(name) === p) this.pending.delete(name);
      });
      this.pending.set(name, p);
      pending = p;
    }
    return pending.catch((err: unknown) => {
      // The caller sees the failure, so its subscribe did not happen.
      void this.unsubscribe(name)?.catch(() => undefined);
      throw err;
    });
  }

  unsubscribe(name: string): Promise<void> | undefined {
    const n = (this.interest.get(name) ?? 0) - 1;
    if (n > 0) {
      this.interest.set(name, n);
      return undefined;
    }
    if (this.interest.delete(name) && !name.startsWith(NODE_INBOX_PREFIX))
      this.engine.followed?.(this.engine.keys.topic(name), false);
    if (!isWildcard(name)) this.gate.forget(name);
    const sub = this.engine.sub;
    if (sub === null || !isReady(sub)) return undefined; // nothing to undo: a reconnect will not resubscribe it
    const topic = this.engine.keys.topic(name);
    const done = this.engine.options.sharded ? sub.sunsubscribe(topic) : sub.unsubscribe(topic);
    return this.engine.track(done).then(() => undefined);
  }

  /**
   * @internal Subscribes to this node's probe topic (on a Redis Cluster the shard probes
   * subscribe theirs) and every name it needs: at start, and
   * after a reconnect, when it also delivers from history what was missed meanwhile, and,
   * with `reportLost` (an outage during which publishes went through Redis), reports what
   * history could not fill in.
   */
  resubscribe(catchUp = false, reportLost = true): Promise<void> {
    if (!catchUp) return this.subscribeAll(false, reportLost);
    const done = this.subscribeAll(true, reportLost).finally(() => {
      if (this.resubscribing === done) this.resubscribing = null;
    });
    this.resubscribing = done;
    return done;
  }

  private async subscribeAll(catchUp: boolean, reportLost: boolean): Promise<void> {
    const e = this.engine;
    const nodeId = e.node().nodeId;
    this.own = `${nodeId}.`;
    const probe = e.options.cluster === null ? [e.keys.probe(nodeId)] : [];
    const topics = [...probe, ...[...this.interest.keys()].map((n) => e.keys.topic(n))];
    if (catchUp) {
      // What was in flight when the connection dropped is lost: history fills the gap.
      this.turns.reset();
      this.gate.hold();
    }
    try {
      for (let i = 0; i < topics.length; i += 1000) await e.track(this.listen(topics.slice(i, i + 1000)));
    } finally {
      if (catchUp) await this.caughtUpOnce(reportLost ? this.followedNames() : []);
    }
  }

  /** The names this node subscribed for its sessions (its inbox aside). */
  private followedNames(): string[] {
    return [...this.interest.keys()].filter((name) => !name.startsWith(NODE_INBOX_PREFIX));
  }

  /**
   * @internal The command connection is on a server again, maybe another one (a Sentinel
   * failover moves the two connections one after the other): the positions this node
   * delivered are checked against that server's history, as after a subscriber reconnect,
   * so a channel whose last writes the new primary never got starts a new epoch instead
   * of numbering new messages with offsets this node already delivered.
   */
  async recheck(): Promise<void> {
    // A catch-up under way may have read the old server: check again once it is done. A
    // resubscribe under way catches up once its SUBSCRIBE is confirmed: a catch-up before
    // that would miss what is published in between, and end the hold on live messages.
    for (let p = this.resubscribing ?? this.catching; p !== null; p = this.resubscribing ?? this.catching)
      await p.catch(() => undefined);
    const sub = this.engine.sub;
    if (sub === null || !isReady(sub)) return; // the subscriber's reconnect will catch up
    const lost = this.deferred ?? [];
    this.deferred = null;
    this.gate.hold();
    await this.catchUp(lost);
  }

  /**
   * The catch-up after a subscriber reconnect. Through Sentinel the subscriber connection
   * may reach the new primary before the command connection, which reads history: a
   * catch-up then would read the old primary, miss that the new one never got this node's
   * last deliveries, and let the new primary's next messages, numbered with offsets this
   * node already delivered, be dropped as repeats. Live messages are held instead until the
   * command connection is on the same server (`recheck`), or `commandTimeoutMs` passed. So
   * they are while the command connection is still reconnecting (one Redis restarted, the
   * two connections back one after the other): a read that fails then would end the hold,
   * and what another node published before this one subscribed again would never come.
   */
  private caughtUpOnce(lost: readonly string[]): Promise<void> {
    const cmd = this.engine.cmd;
    if (cmd !== null && isReady(cmd) && this.sameServer(cmd)) return this.catchUp(lost);
    this.deferred = [...(this.deferred ?? []), ...lost];
    setTimeout(() => {
      if (this.deferred === null) return;
      const late = this.deferred;
      this.deferred = null;
      void this.catchUp(late).catch(() => undefined);
    }, this.engine.options.commandTimeoutMs).unref();
    return Promise.resolve();
  }

  /**
   * Delivers from history what each followed channel carried since its last delivered
   * position, reports the names in `lost` it could not recover that way, then what was held.
   * One at a time: a second one reads from the positions the first one delivered up to.
   */
  private catchUp(lost: readonly string[] = []): Promise<void> {
    const followed = (channel: string) => expandChannel(channel).some((n) => this.interest.has(n));
    const history = new RedisHistory(this.engine);
    const before = this.catching;
    const run = async () => {
      if (before !== null) await before.catch(() => undefined);
      this.gate.hold();
      await this.gate.catchUp((channel, at) => history.delivered(channel, at), followed, lost);
    };
    const done: Promise<void> = run().finally(() => {
      if (this.catching === done) this.catching = null;
    });
    this.catching = done;
    return done;
  }

  /** @internal Whether this node follows a channel (its own inbox aside): then its probes go. */
  following(): boolean {
    for (const name of this.interest.keys()) if (!name.startsWith(NODE_INBOX_PREFIX)) return true;
    return false;
  }

  /**
   * @internal Whether a probe can tell anything now: the subscriber connection is up,
   * caught up, and on the same server as the command connection (through Sentinel, one
   * of them may still be on the old primary for a moment, and then no probe can come
   * back, however healthy the subscriber connection is).
   */
  probeable(): boolean {
    const cmd = this.engine.cmd;
    return cmd !== null && isReady(cmd) && this.listening(cmd);
  }

  /** @internal A message on a publication topic. */
  receive(topic: string, message: string): void {
    const name = this.engine.keys.nameOfTopic(topic);
    if (name === null || !this.interest.has(name)) return;
    const decoded = decodePublication(message);
    if (decoded === null) return;
    if (this.recent.has(decoded.id)) return;
    this.recent.add(decoded.id);
    if (this.recent.size > RECENT_IDS) this.recent.delete(this.recent.values().next().value as string);
    const id = decoded.id;
    const seq = id.startsWith(this.own) ? Number(id.slice(this.own.length)) : -1;
    this.turns.arrived(decoded.publication, seq);
  }

  /**
   * Whether what this node publishes now reaches its own subscribers: its subscriber
   * connection is up, caught up, and (through Sentinel) on the same server as the command
   * connection: after a failover one of them may, for a moment, still be on the old master. A
   * publish that would not be delivered here must fail instead of being acknowledged.
   */
  private listening(cmd: RedisClient): boolean {
    const sub = this.engine.sub;
    if (sub === null || !isReady(sub) || this.gate.holding()) return false;
    return this.sameServer(cmd);
  }

  /** Whether `cmd` and the subscriber connection are on the same server. */
  private sameServer(cmd: RedisClient): boolean {
    // Only Sentinel moves the connections between servers (a name may resolve to several).
    if (this.engine.options.redis.sentinels === undefined) return true;
    const a = (cmd as Redis).stream;
    const b = (this.engine.sub as Redis | null)?.stream;
    return a?.remotePort === b?.remotePort && a?.remoteAddress === b?.remoteAddress;
  }

  /** @internal The node stopped: what is held is dropped, as it would be in flight. */
  abandon(): void {
    this.turns.drop();
    this.calls.stop();
  }

  /**
   * The id and header of a publication about to go out, noted in this turn's batch: the
   * turn's publishes leave in one write, and the node knows which of them come back.
   */
  private header(flag: string, channel: string, names: readonly string[]): string {
    const e = this.engine;
    const seq = ++this.seq;
    const cmd = e.commands();
    // A Redis Cluster client has no one socket, and there the wildcard copies come later.
    const socket = e.options.sharded ? null : ((cmd as { stream?: Corkable }).stream ?? null);
    this.turns.sending(socket, seq, !e.options.sharded && names.some((n) => this.interest.has(n)));
    return `${this.own}${seq}\n${flag}\n${channel}`;
  }

  private async listen(topics: string[]): Promise<void> {
    const sub = this.engine.sub as RedisClient;
    if (!this.engine.options.sharded) {
      await sub.subscribe(...topics);
      return;
    }
    // Shard channels on a cluster may live on different shards: one at a time.
    await Promise.all(topics.map((t) => sub.ssubscribe(t)));
  }

  private async spread(cmd: RedisClient, names: string[], message: string): Promise<void> {
    await this.engine.track(Promise.all(names.map((n) => cmd.spublish(this.engine.keys.topic(n), message))));
  }
}
