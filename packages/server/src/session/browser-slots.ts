/**
 * Long-polls held per browser (the `BAYEUX_BROWSER` cookie): past the limit, a browser's
 * extra connect is answered at once with `multiple-clients` advice instead of being held,
 * so tabs of one browser do not exhaust its few connections per host.
 */
export class BrowserSlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly max: number) {}

  acquire(browserId: string): boolean {
    const n = this.held.get(browserId) ?? 0;
    if (n >= this.max) return false;
    this.held.set(browserId, n + 1);
    return true;
  }

  release(browserId: string): void {
    const n = (this.held.get(browserId) ?? 1) - 1;
    if (n <= 0) this.held.delete(browserId);
    else this.held.set(browserId, n);
  }
}
