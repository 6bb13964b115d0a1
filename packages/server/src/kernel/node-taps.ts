/**
 * Where the operator's console (`admin/`) taps into a running node. The console is a
 * Fastify plugin registered after the node is built, so it cannot be a constructor
 * argument of the kernel; instead the composition root hands the kernel this object at
 * construction, and the console attaches through its methods, each returning the way to
 * detach. Nothing here costs anything while no console is attached.
 */
import type { ConsoleGate } from '../bayeux/kernel-api.js';
import type { Admission } from './admission.js';

export class NodeTaps {
  private gate: ConsoleGate | null = null;
  private statsSource: (() => unknown) | null = null;
  private publishCounter: ((channel: string) => void) | null = null;

  /** `admission`: which handshakes the node admits now (draining, handshake rate); `null`: every one. */
  constructor(readonly admission: Admission | null) {}

  /** Lets the console's sessions past the hooks (`admin/admin-feed.ts`), else `null`. */
  get consoleGate(): ConsoleGate | null {
    return this.gate;
  }

  /** Installs the console's gate; one console per node. */
  openConsole(gate: ConsoleGate): () => void {
    this.gate = gate;
    return () => {
      if (this.gate === gate) this.gate = null;
    };
  }

  /** Answers the `stats` control op with `read()` (the console's node figures). */
  serveStats(read: () => unknown): () => void {
    this.statsSource = read;
    return () => {
      if (this.statsSource === read) this.statsSource = null;
    };
  }

  /** This node's figures for the console, or `null` without one. */
  stats(): unknown {
    return this.statsSource?.() ?? null;
  }

  /** Counts publishes per channel while a console watches. */
  countPublishes(count: (channel: string) => void): () => void {
    this.publishCounter = count;
    return () => {
      if (this.publishCounter === count) this.publishCounter = null;
    };
  }

  /** Whether publishes are being counted now. */
  get countingPublishes(): boolean {
    return this.publishCounter !== null;
  }

  /** A publish on `channel` (the hot path: one null test while nobody counts). */
  published(channel: string): void {
    if (this.publishCounter !== null) this.publishCounter(channel);
  }
}
