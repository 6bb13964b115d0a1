/**
 * A session's subscriptions (channels and patterns), as small as the common case allows:
 * most sessions hold one, kept in a field; a `Set` is made at the second. A `Set` costs
 * 152 bytes from its first entry (the object and a hash table with room for four), this
 * object 40, which is what an idle session subscribed to one channel saves. Iterates in
 * insertion order, as a `Set` does; a deletion while iterating is allowed, as with a `Set`.
 */
export class SubscriptionSet implements ReadonlySet<string> {
  /** The one name held while there is at most one (and no `Set`). */
  private one: string | undefined = undefined;
  /** Every name, once a second came (kept from then on, even should it shrink again). */
  private many: Set<string> | null = null;

  get size(): number {
    if (this.many !== null) return this.many.size;
    return this.one === undefined ? 0 : 1;
  }

  has(name: string): boolean {
    return this.many !== null ? this.many.has(name) : this.one === name;
  }

  add(name: string): this {
    if (this.many !== null) this.many.add(name);
    else if (this.one === undefined) this.one = name;
    else if (this.one !== name) {
      this.many = new Set([this.one, name]);
      this.one = undefined;
    }
    return this;
  }

  delete(name: string): boolean {
    if (this.many !== null) return this.many.delete(name);
    if (this.one !== name) return false;
    this.one = undefined;
    return true;
  }

  forEach(callback: (value: string, key: string, set: ReadonlySet<string>) => void, thisArg?: unknown): void {
    for (const name of this) callback.call(thisArg, name, name, this);
  }

  *values(): IterableIterator<string> {
    if (this.many !== null) yield* this.many;
    else if (this.one !== undefined) yield this.one;
  }

  keys(): IterableIterator<string> {
    return this.values();
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of this) yield [name, name];
  }

  [Symbol.iterator](): IterableIterator<string> {
    return this.values();
  }
}
