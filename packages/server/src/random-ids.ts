/**
 * Random ids (clientIds, browser cookies) from the operating system's CSPRNG without a
 * synchronous `randomBytes` call per id: ids are cut from a pool of random bytes, and the
 * spare pool is refilled in the background (`crypto.randomFill`, on libuv's thread pool)
 * while the other is used. Each byte is used once. If ids are drawn faster than the
 * refill lands, the pool is filled synchronously — still one call per `poolIds` ids.
 */
import { randomFill, randomFillSync } from 'node:crypto';

export class RandomIds {
  private current: Buffer;
  private spare: Buffer;
  private spareReady = false;
  private refilling: Promise<void> | null = null;
  private offset = 0;
  /** Synchronous fills so far (for tests and a sanity metric). */
  syncFills = 0;

  /**
   * @param bytesPerId random bytes per id (base64url: 4 characters per 3 bytes)
   * @param poolIds ids per pool
   */
  constructor(
    private readonly bytesPerId: number,
    poolIds = 256,
  ) {
    if (!Number.isInteger(bytesPerId) || bytesPerId < 8)
      throw new RangeError('bytesPerId must be an integer ≥ 8');
    this.current = randomFillSync(Buffer.allocUnsafe(bytesPerId * poolIds));
    this.spare = Buffer.allocUnsafe(bytesPerId * poolIds);
    this.refill();
  }

  /** A new id, base64url. */
  next(): string {
    if (this.offset + this.bytesPerId > this.current.length) this.swap();
    const id = this.current.toString('base64url', this.offset, this.offset + this.bytesPerId);
    // Wipe what was handed out: a pool buffer never holds a byte that was already used.
    this.current.fill(0, this.offset, this.offset + this.bytesPerId);
    this.offset += this.bytesPerId;
    return id;
  }

  private swap(): void {
    if (!this.spareReady) {
      // The refill has not landed: fill here rather than wait. Its result, when it comes,
      // must not be used, so the pools trade places only after it lands.
      randomFillSync(this.current);
      this.syncFills++;
      this.offset = 0;
      return;
    }
    const used = this.current;
    this.current = this.spare;
    this.spare = used;
    this.spareReady = false;
    this.offset = 0;
    this.refill();
  }

  private refill(): void {
    if (this.refilling !== null) return;
    this.refilling = new Promise((resolve) => {
      randomFill(this.spare, (err) => {
        this.refilling = null;
        // On an error the next swap fills synchronously.
        if (!err) this.spareReady = true;
        resolve();
      });
    });
  }

  /** Resolves once no background refill is in flight (for tests). */
  async settled(): Promise<void> {
    await this.refilling;
  }
}
