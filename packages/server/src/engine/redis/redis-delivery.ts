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
   * whose history cannot say what came after it (a new epoch, or writes lost in a
   * failover), so whatever comes next on it is delivered. After a lost subscriber
   * connection, `lost` names what the node followed (channels and wildcard patterns): each
   * one not recovered here (no history, no position delivered on it, a wildcard, history
   * that no longer reaches back) is reported to the node as missed, before the held ones.
   */
  async catchUp(
    since: (channel: string, at: StreamPosition) => Promise<Recovery>,
    followed: (channel: string) => boolean,
    lost: readonly string[] = [],
  ): Promise<void> {
    const recovered = new Set<string>();
    try {
      for (const channel of [...this.last.keys()]) if (!followed(channel)) this.last.delete(channel);
      const channels = [...this.last];
      const results = await Promise.allSettled(channels.map(([channel, at]) => since(channel, at)));
      for (const [i, r] of results.entries()) {
        const channel = (channels[i] as [string, StreamPosition])[0];
        if (r.status !== 'fulfilled') continue;
        if (r.value.recovered) {
          recovered.add(channel);
          for (const p of r.value.publications) this.pass(p);
        } else this.last.delete(channel);
      }
    } finally {
      // What could not come from history is told, ahead of what arrived since.
      const gaps = lost.filter((name) => !recovered.has(name));
      if (gaps.length > 0) this.tell(gaps);
      const held = this.held ?? [];
      this.held = null;
      for (const p of held) this.pass(p);
    }
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
      if (last !== undefined) {
        if (last.epoch === at.epoch && at.offset <= last.offset) return;
        this.last.delete(publication.channel); // re-inserted last: the map stays in delivery order
      } else if (this.last.size >= this.maxChannels) {
        this.last.delete(this.last.keys().next().value as string);
      }
      this.last.set(publication.channel, at);
    }
    this.node().deliver(publication);
  }
}
