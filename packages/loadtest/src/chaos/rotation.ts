/** The chaos balancer's choice of node (`round-robin.ts`), apart so it can be tested. */
/** The balancer's state in one process: which nodes to pass over, and whose turn it is. */
export class Rotation {
  /** port → time until which it is passed over. */
  private readonly downUntil = new Map<number, number>();
  private readonly notReady = new Set<number>();
  private next = 0;

  constructor(readonly ports: readonly number[]) {}

  /** The next node not tried for this request, passing over refused and not-ready ones while others remain. */
  pick(tried: ReadonlySet<number>, now = Date.now()): number | null {
    for (let i = 0; i < this.ports.length; i++) {
      const port = this.ports[this.next++ % this.ports.length] as number;
      if (!tried.has(port) && !this.notReady.has(port) && (this.downUntil.get(port) ?? 0) <= now) return port;
    }
    for (const port of this.ports) if (!tried.has(port)) return port; // none fit: try anyway
    return null;
  }

  refused(port: number, now = Date.now()): void {
    this.downUntil.set(port, now + 1000);
  }

  ready(port: number, ready: boolean): void {
    if (ready) this.notReady.delete(port);
    else this.notReady.add(port);
  }
}
