/**
 * Cluster-wide channel occupancy: tells the application when a channel gets its first
 * subscriber anywhere in the cluster (`occupied`) and loses its last one (`vacated`),
 * once per transition, whichever node sees it.
 *
 * Each node counts its own subscribers per channel and tells the engine only when that
 * count leaves or reaches zero; the engine's atomic `occupy`/`vacate` say which single
 * node made the cluster-wide transition, and that node emits it. Calls for one channel run
 * one at a time and collapse to what the count wants when they finish, so a subscribe and
 * an unsubscribe racing each other cost at most one pair of engine calls. Channels of nodes
 * that died are freed by a periodic sweep (`vacateDead`). Entries live while a channel has
 * local subscribers or an engine call in flight.
 *
 * Until someone wants the events (webhooks, or a listener of `channel:occupied` or
 * `channel:vacated` on `app.bayou`) it only counts, with no engine call and no sweep;
 * `activate()` then settles every channel that has local subscribers.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Presence } from '../engine/engine.js';

export type OccupancyChange = 'occupied' | 'vacated';

interface Entry {
  /** This node's subscribers. */
  local: number;
  /** Whether the engine counts this node as occupying the channel. */
  held: boolean;
  busy: boolean;
}

export class ChannelOccupancy {
  private readonly channels = new Map<string, Entry>();
  private timer: NodeJS.Timeout | null = null;
  private idle: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** Engine calls that failed (retried by the sweep). */
  errors = 0;
  private started = false;

  constructor(
    private readonly presence: Presence,
    private readonly emit: (change: OccupancyChange, channel: string) => void,
    private readonly log: FastifyBaseLogger,
    private readonly sweepMs: number,
    /** Whether the events are wanted from the start (webhooks); otherwise `activate()`. */
    private active: boolean,
  ) {}

  /** The events are wanted from now on: channels with subscribers here are reported. */
  activate(): void {
    if (this.active) return;
    this.active = true;
    if (this.started) this.startSweep();
    for (const [channel, e] of this.channels) if (e.local > 0) void this.settle(channel, e);
  }

  /** Channels tracked now (local subscribers or a call in flight). */
  get size(): number {
    return this.channels.size;
  }

  added(channel: string): void {
    let e = this.channels.get(channel);
    if (e === undefined) {
      e = { local: 0, held: false, busy: false };
      this.channels.set(channel, e);
    }
    e.local++;
    if (e.local === 1 && this.active) void this.settle(channel, e);
  }

  removed(channel: string): void {
    const e = this.channels.get(channel);
    if (e === undefined || e.local === 0) return;
    e.local--;
    if (e.local > 0) return;
    if (this.active) void this.settle(channel, e);
    else if (!e.busy && !e.held) this.channels.delete(channel);
  }

  start(): void {
    this.started = true;
    if (this.active) this.startSweep();
  }

  private startSweep(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  /** Stops the sweep and waits (bounded by the engine's own timeouts) for calls in flight. */
  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    while (this.busy() > 0) {
      this.idle ??= new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      await this.idle;
    }
  }

  /**
   * Frees dead nodes' channels, takes back this node's own if it was taken for dead, and
   * retries channels whose last engine call failed.
   */
  async sweep(): Promise<void> {
    try {
      for (const channel of await this.presence.vacateDead()) this.emit('vacated', channel);
      // This node may itself have been taken for dead by another's sweep (a stall).
      for (const channel of await this.presence.reclaim()) this.emit('occupied', channel);
    } catch (err) {
      this.failed(err);
    }
    for (const [channel, e] of this.channels)
      if (!e.busy && e.local > 0 !== e.held) void this.settle(channel, e);
  }

  private busy(): number {
    let n = 0;
    for (const e of this.channels.values()) if (e.busy) n++;
    return n;
  }

  private async settle(channel: string, e: Entry): Promise<void> {
    if (e.busy) return;
    e.busy = true;
    try {
      while (e.local > 0 !== e.held) {
        const want = e.local > 0;
        const changed = want ? await this.presence.occupy(channel) : await this.presence.vacate(channel);
        e.held = want;
        if (changed) this.emit(want ? 'occupied' : 'vacated', channel);
      }
    } catch (err) {
      this.failed(err);
    } finally {
      e.busy = false;
      if (e.local === 0 && !e.held && this.channels.get(channel) === e) this.channels.delete(channel);
      if (this.wake !== null && this.busy() === 0) {
        this.wake();
        this.wake = null;
        this.idle = null;
      }
    }
  }

  private failed(err: unknown): void {
    this.errors++;
    this.log.warn({ err }, 'channel occupancy: engine call failed (retried by the sweep)');
  }
}
