/**
 * Why a client that cannot connect cannot. An attempt that failed on every transport is
 * emitted as an `error` (`BAYOU_ERR_UNREACHABLE`) when its reason differs from the last one
 * reported, with the HTTP status the server answered and, for a page whose origin the
 * server refuses (`403 (origin not allowed)`), the fix. `connect()` rejects after
 * `connectDeadline` ms with the last reason (`BAYOU_ERR_CONNECT_TIMEOUT`); the client goes
 * on trying. (Kept small: the IIFE has a size budget.)
 */
import { BayouError, ErrorCodes } from './errors.js';

export class ConnectTrouble {
  /** The last reason reported since the client was last connected. */
  private last: BayouError | null = null;

  constructor(
    private readonly url: string,
    private readonly deadline: number,
    private readonly emit: (error: BayouError) => void,
  ) {}

  /** Every transport failed an attempt with `cause`. */
  failed(cause: BayouError): void {
    const page = (globalThis as { location?: { origin?: string } }).location?.origin;
    const fix = cause.message.includes('origin') ? `; start the server with --allowed-origins ${page}` : '';
    const error = new BayouError(
      ErrorCodes.UNREACHABLE,
      `${this.url}: ${cause.message}${fix}`,
      null,
      cause.status,
    );
    if (error.message !== this.last?.message) this.emit(error);
    this.last = error;
  }

  connected(): void {
    this.last = null;
  }

  /** `connecting`, rejected after the deadline unless it settled (`0`: no deadline). */
  within(connecting: Promise<void>): Promise<void> {
    if (this.deadline === 0) return connecting;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const why = `not connected in ${this.deadline} ms (${this.last?.message ?? 'no answer'})`;
        reject(new BayouError(ErrorCodes.CONNECT_TIMEOUT, why, null, this.last?.status));
      }, this.deadline);
      connecting.then(resolve, reject).finally(() => clearTimeout(timer));
    });
  }
}
