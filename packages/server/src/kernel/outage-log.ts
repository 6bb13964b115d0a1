/**
 * Logs an engine outage once: at warn when the first call is refused, at info when a call
 * succeeds again (with how many were refused meanwhile). A failover refuses hundreds of
 * calls in a few seconds; one line each, with its stack, flooded the log and hid the cause.
 */
import type { FastifyBaseLogger } from 'fastify';

export class OutageLog {
  private down = false;
  private refused = 0;

  constructor(
    private readonly log: FastifyBaseLogger,
    /** Who refuses: `'Bayeux'`, `'publish API'`, `'bayou.publish'`. */
    private readonly what: string,
  ) {}

  /** A call failed because the engine could not answer. */
  failed(err: unknown): void {
    this.refused++;
    if (this.down) return;
    this.down = true;
    const message = err instanceof Error ? err.message : String(err);
    this.log.warn(
      `${this.what}: the engine is unavailable (${message}); calls are refused with 503 until it answers again (logged once per outage)`,
    );
  }

  /** A call went through: ends the outage, if there was one. */
  answered(): void {
    if (!this.down) return;
    this.down = false;
    this.log.info({ refused: this.refused }, `${this.what}: the engine answers again`);
    this.refused = 0;
  }
}
