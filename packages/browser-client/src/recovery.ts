/**
 * Recovery from the server's history (Bayou's replay extension). The handshake asks for
 * it (`ext.replay: true`); when the server agrees, every delivered message carries its
 * position (`ext.replay: { offset, epoch }`). The client keeps the last position of each
 * concrete channel, drops a message at or before it (a duplicate), and sends the
 * positions with every subscribe, so a resubscribe after a new session gets what it
 * missed. When the server cannot cover the gap it says `recovered: false`, and the
 * client reports the gap instead of staying silent. A gap the server's node found itself
 * (its connection to the engine was silent, nothing in history to recover from) comes as
 * a notice on `/meta/gap`, reported the same way.
 */
import { EXT_REPLAY, GAP_CHANNEL, META_HANDSHAKE, META_SUBSCRIBE } from '@bayou/protocol';
import type { Extension, Message } from './types.js';

/** A position in a channel's stream: offsets count within one epoch. */
export interface Position {
  readonly offset: number;
  readonly epoch: string;
}

/** What the `gap` event reports: messages on `channel` after `from` up to `to` were lost. */
export interface GapInfo {
  readonly channel: string;
  /** The last position the client had (null if it had none). */
  readonly from: Position | null;
  /**
   * The channel's position when the server answered; the stream resumes after it. `null`
   * for a gap the server told on its own (`/meta/gap`): `channel` may then be a pattern.
   */
  readonly to: Position | null;
}

export class Recovery implements Extension {
  private enabled = false;
  /** The last position of each concrete channel (read by a shared connection's hub). */
  readonly positions = new Map<string, Position>();
  /** What subscribe replies could not recover, by subscribe id, until the client takes it. */
  private readonly gaps = new Map<string, GapInfo[]>();

  constructor(
    private readonly wanted: boolean,
    /** A gap the server told on its own, between deliveries. */
    private readonly told?: (gap: GapInfo) => void,
  ) {}

  /** No subscription wants `channel` any more: a later one starts from the live stream. */
  forget(channel: string): void {
    this.positions.delete(channel);
  }

  /**
   * A position known from elsewhere (the tabs of a shared connection, after a new leader
   * took over): the earliest one of an epoch is kept, so no tab misses what follows it.
   */
  seed(channel: string, p: Position): void {
    const last = this.positions.get(channel);
    if (last === undefined || (last.epoch === p.epoch && p.offset < last.offset))
      this.positions.set(channel, p);
  }

  /** The gaps the subscribe reply `id` reported (`recovered: false`), once. */
  takeGaps(id: string | undefined): GapInfo[] {
    if (id === undefined) return [];
    const gaps = this.gaps.get(id) ?? [];
    this.gaps.delete(id);
    return gaps;
  }

  outgoing(message: Message): Message | null {
    if (!this.wanted) return message;
    if (message.channel === META_HANDSHAKE) {
      this.enabled = false;
      this.gaps.clear();
      return { ...message, ext: { ...message.ext, [EXT_REPLAY]: true } };
    }
    if (message.channel === META_SUBSCRIBE && this.enabled) {
      const wanted: Record<string, Position> = {};
      let any = false;
      for (const channel of [message.subscription].flat()) {
        const p = typeof channel === 'string' ? this.positions.get(channel) : undefined;
        if (p !== undefined && !(channel as string).includes('*')) {
          wanted[channel as string] = p;
          any = true;
        }
      }
      if (any) return { ...message, ext: { ...message.ext, [EXT_REPLAY]: wanted } };
    }
    return message;
  }

  incoming(message: Message): Message | null {
    if (!this.wanted) return message;
    const ext = message.ext?.[EXT_REPLAY];
    if (message.channel === META_HANDSHAKE) {
      if (message.successful) this.enabled = ext === true;
      return message;
    }
    if (!this.enabled || ext === null || typeof ext !== 'object') return message;
    if (message.channel === GAP_CHANNEL) {
      for (const channel of Object.keys(ext))
        this.told?.({ channel, from: this.positions.get(channel) ?? null, to: null });
      return null;
    }
    if (message.channel === META_SUBSCRIBE) {
      if (message.successful) this.replied(message, ext as Record<string, unknown>);
      return message;
    }
    // Replies (every `/meta/` message the server sends is one) carry no position.
    if (message.successful !== undefined) return message;
    const p = asPosition(ext);
    if (p === null) return message;
    const last = this.positions.get(message.channel);
    if (last !== undefined && last.epoch === p.epoch && p.offset <= last.offset) return null;
    this.positions.set(message.channel, p);
    return message;
  }

  private replied(reply: Message, ext: Record<string, unknown>): void {
    for (const channel of Object.keys(ext)) {
      const r = ext[channel] as { recovered?: unknown } | null;
      const to = asPosition(r);
      if (to === null) continue;
      const from = this.positions.get(channel) ?? null;
      if (r?.recovered === false) {
        this.positions.set(channel, to);
        if (reply.id !== undefined) {
          const gaps = this.gaps.get(reply.id) ?? [];
          gaps.push({ channel, from, to });
          this.gaps.set(reply.id, gaps);
        }
      } else if (from === null || from.epoch !== to.epoch) {
        // A first subscribe: the stream starts after the channel's latest position.
        this.positions.set(channel, to);
      }
      // Recovered from a known position: the replayed messages advance it.
    }
  }
}

function asPosition(value: unknown): Position | null {
  if (value === null || typeof value !== 'object') return null;
  const { offset, epoch } = value as { offset?: unknown; epoch?: unknown };
  return typeof offset === 'number' && typeof epoch === 'string' ? { offset, epoch } : null;
}
