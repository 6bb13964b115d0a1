/**
 * feed --source demo: the updates come from a Bayou server's built-in demo feed
 * (`bayou start --demo-feed`), records `/demo/prices/<SYMBOL>` with the fields bid, ask,
 * last, change, volume and `time` (the server's ms timestamp of the update). A subscriber
 * first gets the record's full image (the snapshot), then deltas.
 *
 * The generator cannot know how many updates the server produced, so loss is not counted
 * per message here. What it can check exactly is the record protocol: every subscription
 * gets one snapshot, and no delta comes before it or on a subject the client did not ask
 * for. Per client it keeps its subjects (2 bytes each) and a snapshot count per subject
 * (1 byte each), in flat typed arrays: no object per client or per subscription.
 */

import { DEMO_PRICES_PREFIX, demoSymbol } from '@bayou/protocol';
import type { RecordSink } from '../driver.js';
import { assignGroups, type Slice } from '../groups.js';
import type { LoadtestOptions } from '../options.js';
import type { DeliveryStats } from '../stats.js';

/** The server's symbol of index `i` (`AAA`, `AAB`, … `ZZZ`), as `demoSymbol` in @bayou/protocol. */
export { demoSymbol };

/** The index of a demo subject's symbol (`/demo/prices/AAB` → 1), or -1 for anything else. */
export function demoSymbolIndex(channel: string): number {
  if (channel.length !== DEMO_PRICES_PREFIX.length + 3 || !channel.startsWith(DEMO_PRICES_PREFIX)) return -1;
  let i = 0;
  for (let p = DEMO_PRICES_PREFIX.length; p < channel.length; p++) {
    const d = channel.charCodeAt(p) - 65;
    if (d < 0 || d > 25) return -1;
    i = i * 26 + d;
  }
  return i;
}

/** What one part (worker) counted; the runner adds the parts up. */
export interface DemoFeedPart {
  /** Subscriptions made: subscribed clients × subjects per client. */
  subscriptions: number;
  /** Subscriptions that got their snapshot. */
  snapshots: number;
  /** Snapshots beyond the first on one subscription. */
  duplicateSnapshots: number;
  /** Subscriptions still without a snapshot at the end. */
  missingSnapshots: number;
  deltas: number;
  /** Deltas that arrived before their subscription's snapshot. */
  deltasBeforeSnapshot: number;
  /** Messages on a subject the client had not subscribed to. */
  unexpected: number;
  /** Deltas without a numeric `time` field (counted, no latency). */
  untimed: number;
}

export class DemoFeedTracker implements RecordSink {
  readonly perClient: number;
  private readonly lo: number;
  /** Symbol indexes of client `lo + c` at [c × perClient, (c + 1) × perClient). */
  private readonly subjects: Uint16Array;
  /** Snapshots received per subscription, saturating at 255. */
  private readonly snaps: Uint8Array;
  /** 1 once the client's subscribe was acknowledged. */
  private readonly subscribed: Uint8Array;
  /**
   * The last `time` seen per subscription: a delta carries only the fields that changed, so
   * two updates of one subject within a millisecond (a late timer catching up) leave `time`
   * out of the second, whose time is then the image's.
   */
  private readonly times: Float64Array;
  private snapshots = 0;
  private duplicateSnapshots = 0;
  private deltas = 0;
  private deltasBeforeSnapshot = 0;
  private unexpected = 0;
  private untimed = 0;

  constructor(
    options: Readonly<LoadtestOptions>,
    slice: Slice,
    private readonly stats: DeliveryStats,
  ) {
    const k = options.subjectsPerClient;
    this.perClient = k;
    this.lo = slice.lo;
    // The same seeded assignment in every worker; each keeps only its own clients'.
    const all = assignGroups(options.clients, options.subjects, k, options.seed);
    this.subjects = new Uint16Array((slice.hi - slice.lo) * k);
    for (let i = slice.lo; i < slice.hi; i++) this.subjects.set(all[i]!, (i - slice.lo) * k);
    this.snaps = new Uint8Array(this.subjects.length);
    this.subscribed = new Uint8Array(slice.hi - slice.lo);
    this.times = new Float64Array(this.subjects.length);
  }

  /** The subjects client `index` subscribes to. */
  channelsOf(index: number): string[] {
    const base = (index - this.lo) * this.perClient;
    return Array.from(
      this.subjects.subarray(base, base + this.perClient),
      (s) => DEMO_PRICES_PREFIX + demoSymbol(s),
    );
  }

  markSubscribed(index: number): void {
    this.subscribed[index - this.lo] = 1;
  }

  onRecord(index: number, channel: string, data: unknown, kind: unknown): void {
    const symbol = demoSymbolIndex(channel);
    const base = (index - this.lo) * this.perClient;
    let slot = -1;
    if (symbol >= 0 && index >= this.lo && base < this.subjects.length) {
      for (let j = base; j < base + this.perClient; j++) {
        if (this.subjects[j] === symbol) {
          slot = j;
          break;
        }
      }
    }
    if (slot < 0) {
      this.unexpected++;
      return;
    }
    const seen = this.snaps[slot]!;
    const sent = (data as { time?: unknown } | null)?.time;
    if (typeof sent === 'number') this.times[slot] = sent;
    // A Bayou server tags records when asked in the handshake; untagged, the first is the snapshot.
    if (kind === 's' || (kind !== 'd' && seen === 0)) {
      if (seen === 0) this.snapshots++;
      else this.duplicateSnapshots++;
      if (seen < 255) this.snaps[slot] = seen + 1;
      this.stats.onSnapshot();
      return;
    }
    this.deltas++;
    if (seen === 0) this.deltasBeforeSnapshot++;
    const time = this.times[slot]!;
    if (time > 0) this.stats.onUpdate(time, Date.now());
    else {
      this.untimed++;
      this.stats.onUpdate(undefined, 0);
    }
  }

  /** Subscriptions of subscribed clients that have no snapshot yet. */
  missingSnapshots(): number {
    let missing = 0;
    for (let c = 0; c < this.subscribed.length; c++) {
      if (this.subscribed[c] === 0) continue;
      for (let j = c * this.perClient; j < (c + 1) * this.perClient; j++) if (this.snaps[j] === 0) missing++;
    }
    return missing;
  }

  toPart(): DemoFeedPart {
    let clients = 0;
    for (const s of this.subscribed) clients += s;
    return {
      subscriptions: clients * this.perClient,
      snapshots: this.snapshots,
      duplicateSnapshots: this.duplicateSnapshots,
      missingSnapshots: this.missingSnapshots(),
      deltas: this.deltas,
      deltasBeforeSnapshot: this.deltasBeforeSnapshot,
      unexpected: this.unexpected,
      untimed: this.untimed,
    };
  }
}
