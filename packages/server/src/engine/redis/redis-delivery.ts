/**
 * Hands publications to the node once each and in order per channel, also across a lost
 * subscriber connection. It remembers the last position delivered on each channel with
 * history; after a reconnect it holds live publications back, fetches from history what
 * the node missed while it was cut off, delivers that, then what it held, dropping
 * anything at or before a position already delivered.
 */
import type { EngineNode, Publication, Recovery, StreamPosition } from '../engine.js';

/**
 * Most channels whose last position is kept (the least recently delivered go first): a
 * node following `/**` over countless channels must not grow without bound.
 */
const MAX_CHANNELS = 50_000;

/**
 * What history answers for a position this node delivered: a `Recovery`, or that the
 * position's epoch is over and the current epoch, whole from its offset 1, is `restarted`
 * (its latest position `position`).
 */
export type NodeRecovery =
  | Recovery
  | {
      readonly recovered: false;
      readonly restarted: readonly Publication[];
      readonly position: StreamPosition;
    };

/** A channel whose epoch is over: the position delivered in the old one, the new one's messages. */
interface Restart {
  readonly from: StreamPosition;
  readonly restarted: readonly Publication[];
  readonly position: StreamPosition;
}

export class DeliveryGate {
  /** channel → last position delivered on it. */
  private readonly last = new Map<string, StreamPosition>();
  private held: Publication[] | null = null;

  constructor(
    private readonly node: () => EngineNode,
    private readonly maxChannels = MAX_CHANNELS,
  ) {}

  accept(publication: Publication): void {
    if (this.held !== null) this.held.push(publication);
    else this.pass(publication);
  }

  /** The node no longer follows `channel` (an exact name was unsubscribed). */
  forget(channel: string): void {
    this.last.delete(channel);
  }

  /** Holds live publications back until `catchUp` is done. */
  hold(): void {
    this.held ??= [];
  }

  /** Whether live publications are held back (a catch-up is under way). */
  holding(): boolean {
    return this.held !== null;
  }

  /**
   * Delivers what each followed channel carried since its last delivered position (when
   * history still has it), then the held publications; channels the node no longer
   * needs (`followed` false) are forgotten, and so is the last position of a channel
   * whose history cannot say what came after it (trimmed, expired, writes lost in a
   * failover), so whatever comes next on it is delivered. A channel whose last delivered
   * position is in an epoch that is over (a Redis restarted empty) gets its current epoch
   * from the start, when history holds all of it: none of it was delivered here, and what
   * was published before the node subscribed again is in it. After a lost subscriber
   * connection, `lost` names what the node followed (channels and wildcard patterns): each
   * one not recovered here (no history, no position delivered on it, a wildcard, history
   * that no longer reaches back, an epoch that is over) is reported to the node as missed,
   * after the recovered publications and before the new epochs and the held ones.
   */
  async catchUp(
    since: (channel: string, at: StreamPosition) => Promise<NodeRecovery>,
    followed: (channel: string) => boolean,
    lost: readonly string[] = [],
  ): Promise<void> {
    const recovered = new Set<string>();
    const restarts = new Map<string, Restart>();
    try {
      for (const channel of [...this.last.keys()]) if (!followed(channel)) this.last.delete(channel);
      const channels = [...this.last];
      const results = await Promise.allSettled(channels.map(([channel, at]) => since(channel, at)));
      for (const [i, r] of results.entries()) {
        const [channel, at] = channels[i] as [string, StreamPosition];
        if (r.status !== 'fulfilled') continue;
        const answer = r.value;
        if (answer.recovered) {
          recovered.add(channel);
          for (const p of answer.publications) this.pass(p);
        } else if ('restarted' in answer) restarts.set(channel, { from: at, ...answer });
        else this.last.delete(channel);
      }
    } finally {
      const held = this.held ?? [];
      this.held = null;
      this.release(held, lost, recovered, restarts);
    }
  }

  /**
   * The end of a catch-up, in order: what was held of an epoch that is over (it arrived
   * before the connection dropped), the names history did not cover, each new epoch from
   * its start, then the rest of what was held (what the new epochs gave already is
   * dropped as a repeat).
   */
  private release(
    held: readonly Publication[],
    lost: readonly string[],
    recovered: ReadonlySet<string>,
    restarts: ReadonlyMap<string, Restart>,
  ): void {
    const rest: Publication[] = [];
    for (const p of held) {
      const old = restarts.get(p.channel)?.from.epoch;
      if (old !== undefined && p.position?.epoch === old) this.pass(p);
      else rest.push(p);
    }
    const gaps = lost.filter((name) => !recovered.has(name));
    if (gaps.length > 0) this.tell(gaps);
    for (const [channel, r] of restarts) {
      if (r.restarted.length === 0) this.remember(channel, r.position);
      for (const p of r.restarted) this.pass(p);
    }
    for (const p of rest) this.pass(p);
  }

  private tell(gaps: readonly string[]): void {
    let node: EngineNode;
    try {
      node = this.node();
    } catch {
      return; // the engine stopped meanwhile: nobody left to tell
    }
    node.missed?.(gaps);
  }

  private pass(publication: Publication): void {
    const at = publication.position;
    if (at !== null) {
      const last = this.last.get(publication.channel);
      if (last !== undefined && last.epoch === at.epoch && at.offset <= last.offset) return;
      this.remember(publication.channel, at);
    }
    this.node().deliver(publication);
  }

  /** `at` is the last position delivered on `channel` (the map stays in delivery order). */
  private remember(channel: string, at: StreamPosition): void {
    if (!this.last.delete(channel) && this.last.size >= this.maxChannels)
      this.last.delete(this.last.keys().next().value as string);
    this.last.set(channel, at);
  }
}
