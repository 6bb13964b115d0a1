/**
 * The open WebSockets of one server, tracked by the transport instead of by `ws`: with its
 * `clientTracking`, `ws` gives every socket a `close` listener of its own (a closure and
 * its context, and an array on the socket's `close` event beside the transport's
 * listener: about 170 bytes a socket); here a socket costs its entry in one `Set`, and
 * leaves it from the transport's own module-level `close` handler.
 */
export class OpenLinks<T> {
  private readonly links = new Set<T>();
  private emptied: (() => void) | null = null;

  get size(): number {
    return this.links.size;
  }

  add(link: T): void {
    this.links.add(link);
  }

  /** A link closed: forgotten; the last one out settles `whenEmpty`. */
  delete(link: T): void {
    if (!this.links.delete(link) || this.links.size > 0) return;
    const emptied = this.emptied;
    this.emptied = null;
    emptied?.();
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.links.values();
  }

  /** Settles once no link is open (at once when none is). */
  whenEmpty(): Promise<void> {
    if (this.links.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const before = this.emptied;
      this.emptied = () => {
        before?.();
        resolve();
      };
    });
  }
}
