/**
 * How the kernel runs what may fail: an engine call (its failure undoes what was done and
 * becomes `503::engine_unavailable`, logged once per outage), an extension step (a throw becomes the message's
 * error) and an application event listener (a throw is logged, never propagated).
 */
import { formatError } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import { ExtensionFailure } from '../bayeux/extensions.js';
import type { MaybePromise } from '../engine/engine.js';
import type { EventSink } from './events.js';
import { errorFor } from './hooks.js';
import { OutageLog } from './outage-log.js';

export class Guards {
  private readonly outage: OutageLog;

  constructor(
    readonly log: FastifyBaseLogger,
    private readonly events: EventSink,
    /** Counts engine failures. */
    private readonly stats: { engineErrors: number },
  ) {
    this.outage = new OutageLog(log, 'Bayeux');
  }

  /** Runs an engine call; its failure undoes what was done and becomes `503::engine_unavailable`. */
  engineCall(call: () => MaybePromise<unknown>, undo: () => void): MaybePromise<string | undefined> {
    const failed = (err: unknown): string => {
      this.stats.engineErrors++;
      this.outage.failed(err);
      undo();
      return formatError('engineUnavailable');
    };
    try {
      const r = call();
      if (r instanceof Promise) return r.then(this.answered, failed);
      this.outage.answered();
      return undefined;
    } catch (err) {
      return failed(err);
    }
  }

  private readonly answered = (): undefined => {
    this.outage.answered();
    return undefined;
  };

  /** Runs an extension step; a throw or rejection becomes the message's error. */
  extensionCall(call: () => MaybePromise<string | undefined>): MaybePromise<string | undefined> {
    try {
      const r = call();
      return r instanceof Promise ? r.catch((err: unknown) => this.extensionFailed(err)) : r;
    } catch (err) {
      return this.extensionFailed(err);
    }
  }

  extensionFailed(err: unknown): string {
    const cause = err instanceof ExtensionFailure ? err.cause : err;
    return errorFor(cause, this.log, err instanceof ExtensionFailure ? err.message : 'extension');
  }

  /** Emits an application event; a listener that throws is logged and reported as `false`. */
  emitSafe(run: (events: EventSink) => void): boolean {
    try {
      run(this.events);
      return true;
    } catch (err) {
      this.log.error({ err }, 'event listener failed');
      return false;
    }
  }
}
