/**
 * Per-turn batching through Redis, on both sides of a node's own publishes, so that the
 * Redis engine keeps the batching the memory engine gets for free (publications of one
 * event-loop turn delivered together, then flushed once per session).
 *
 * Out: the publishes this node issues during one turn leave in one write (the command
 * connection's socket is corked until the turn ends), so Redis reads them at once, runs
 * them in one go and writes their pub/sub messages to this node's subscriber connection
 * in one write too.
 *
 * In: Redis reads at most 16 KB of commands per client per loop, so a big batch comes
 * back in several writes, and a read may catch only its first part. When part of a batch
 * is back, what arrives is held (everything, in arrival order, so per-channel order is
 * kept) until the rest of the batch is back, or until `windowMs` passed without any more
 * of it; then it is delivered in one go. A batch that returns whole, as every batch of a
 * few publishes does, is never held: at low load nothing waits.
 */
import type { Publication } from '../engine.js';

/** Most batches tracked; older ones are forgotten (their messages then count as not due). */
const MAX_BATCHES = 1024;

/** Something whose writes can be gathered: the command connection's socket. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/** The publishes of one turn that this node will receive back: own ids `first`…`last`. */
interface Batch {
  first: number;
  last: number;
}

export class TurnBatcher {
  /** Whether a publish went out during this turn (its end uncorks and closes the batch). */
  private inTurn = false;
  /** This turn's batch (null until a publish this node will receive back is sent). */
  private open: Batch | null = null;
  private corked: Corkable | null = null;
  /** Batches sent and not fully back, oldest first. */
  private readonly batches: Batch[] = [];
  /** What arrived while a batch was partly back, in arrival order. */
  private held: Publication[] = [];
  /** When the latest part of the batch being held came back. */
  private progressAt = 0;
  private checking = false;
  private readonly endTurn = (): void => {
    this.inTurn = false;
    this.open = null;
    const corked = this.corked;
    this.corked = null;
    corked?.uncork();
  };
  private readonly check = (): void => {
    this.checking = false;
    if (this.held.length === 0) return;
    if (this.now() - this.progressAt >= this.windowMs) this.release();
    else this.schedule();
  };

  constructor(
    /** Longest wait for more of a batch that is partly back, in milliseconds. */
    private readonly windowMs: number,
    /** Hands a publication on (to the delivery gate). */
    private readonly pass: (publication: Publication) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Before a publish command is written on `socket` (null: nothing to cork, e.g. a
   * Redis Cluster client): `seq` is the counter of its id, `returns` whether this node
   * has interest in it and so will receive it back.
   */
  sending(socket: Corkable | null, seq: number, returns: boolean): void {
    if (!this.inTurn) {
      this.inTurn = true;
      socket?.cork();
      this.corked = socket;
      setImmediate(this.endTurn);
    }
    if (!returns) return;
    if (this.open === null) {
      this.open = { first: seq, last: seq };
      if (this.batches.length >= MAX_BATCHES) this.batches.shift();
      this.batches.push(this.open);
    } else this.open.last = seq;
  }

  /** A publication from Redis; `seq` is its id's counter when this node sent it, else -1. */
  arrived(publication: Publication, seq: number): void {
    if (seq >= 0) {
      const b = this.batches;
      while (b.length > 0 && (b[0] as Batch).last <= seq) b.shift();
      if (b.length > 0 && (b[0] as Batch).first <= seq) {
        this.hold(publication);
        return;
      }
    } else if (this.held.length > 0 && this.now() - this.progressAt < this.windowMs) {
      this.held.push(publication); // behind what is held, so per-channel order stays
      return;
    }
    // Nothing due any more: what was held first, then this one.
    this.release();
    this.pass(publication);
  }

  /** Delivers what is held now (also when the connection to Redis went away). */
  release(): void {
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    for (let i = 0; i < held.length; i++) this.pass(held[i] as Publication);
  }

  /** Forgets the batches in flight (after a reconnect their messages will not come back). */
  reset(): void {
    this.batches.length = 0;
    this.release();
  }

  /** The node stopped: drops what is held, as if it were still in flight. */
  drop(): void {
    this.batches.length = 0;
    this.held = [];
  }

  private hold(publication: Publication): void {
    this.progressAt = this.now();
    if (this.held.length === 0) this.schedule();
    this.held.push(publication);
  }

  private schedule(): void {
    if (this.checking) return;
    this.checking = true;
    // A timer cannot wait less than a millisecond: check again after each I/O poll.
    setImmediate(this.check);
  }
}
