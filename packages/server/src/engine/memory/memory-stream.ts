/**
 * One channel's history in memory: a bounded run of the latest messages with their
 * offsets, trimmed by count on append and by age on read. Its epoch is handed in by the
 * `StreamTable`, which never gives a new stream the epoch of one it dropped, so positions
 * from a stream that was lost never match a new one.
 */
import type { HistoryPolicy, Publication, Recovery, StreamPosition } from '../engine.js';
import type { Recent } from '../recency-index.js';

interface Entry {
  readonly publication: Publication;
  readonly at: number;
}

export class MemoryStream implements Recent<MemoryStream> {
  private top = 0;
  private entries: Entry[] = [];
  /** Neighbours in the table's order of last publication. */
  older: MemoryStream | null = null;
  newer: MemoryStream | null = null;

  constructor(
    readonly key: string,
    readonly epoch: string,
    /** When it was last published to (or made, until then); the table sets it. */
    public lastAt: number,
    /** ms it stays after `lastAt`: the publishing policy's, or the table's for a stream only read. */
    public ttlMs: number,
  ) {}

  /** The channel it keeps. */
  get channel(): string {
    return this.key;
  }

  get position(): StreamPosition {
    return { offset: this.top, epoch: this.epoch };
  }

  /** Appends a message; returns it with its position. */
  append(payload: string, policy: HistoryPolicy, now: number): Publication {
    this.top++;
    const publication: Publication = { channel: this.channel, payload, position: this.position };
    this.entries.push({ publication, at: now });
    const excess = this.entries.length - policy.size;
    if (excess > 0) this.entries.splice(0, excess);
    return publication;
  }

  since(position: StreamPosition, now: number): Recovery {
    this.expire(now);
    const latest = this.position;
    if (position.epoch !== this.epoch || position.offset > this.top || position.offset < 0) {
      return { recovered: false, position: latest };
    }
    const first = this.entries[0]?.publication.position?.offset ?? this.top + 1;
    // Everything after `position` must still be here: the next offset it needs is retained.
    if (position.offset + 1 < first) return { recovered: false, position: latest };
    const publications: Publication[] = [];
    for (const e of this.entries) {
      if ((e.publication.position as StreamPosition).offset > position.offset)
        publications.push(e.publication);
    }
    return { recovered: true, publications, position: latest };
  }

  private expire(now: number): void {
    let drop = 0;
    while (drop < this.entries.length && now - (this.entries[drop] as Entry).at >= this.ttlMs) drop++;
    if (drop > 0) this.entries.splice(0, drop);
  }
}
