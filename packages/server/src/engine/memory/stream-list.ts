/**
 * Streams in the order they were last published to, linked through the streams
 * themselves: appending, unlinking and reaching the oldest cost O(1) and no allocation.
 * (A Map's insertion order would give the same order, but reaching its first entry after
 * many deletions at the front walks every deleted slot: tens of µs at 100,000 entries.)
 */
import type { MemoryStream } from './memory-stream.js';

export class StreamList {
  oldest: MemoryStream | null = null;
  private newest: MemoryStream | null = null;

  /** Puts `stream` at the newest end. */
  append(stream: MemoryStream): void {
    stream.older = this.newest;
    stream.newer = null;
    if (this.newest !== null) this.newest.newer = stream;
    else this.oldest = stream;
    this.newest = stream;
  }

  unlink(stream: MemoryStream): void {
    if (stream.older !== null) stream.older.newer = stream.newer;
    else this.oldest = stream.newer;
    if (stream.newer !== null) stream.newer.older = stream.older;
    else this.newest = stream.older;
    stream.older = null;
    stream.newer = null;
  }
}
