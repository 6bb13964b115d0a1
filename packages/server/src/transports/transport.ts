/**
 * What every transport shares, whatever carries its frames (engine.io's `transport.ts` is
 * the model): a batch of messages run through the kernel with one error policy, and the
 * carriers a session is bound to.
 *
 * A transport takes requests or frames in, builds a `BatchContext` naming where replies go
 * and what may hold a `/meta/connect`, and runs the batch with `runBatch`. Deliveries leave
 * through one of two carriers the session knows (`session/carrier.ts`):
 * - a `PendingPoll`, answered once with everything (long-polling);
 * - a `Carrier`, written a frame per flush for as long as it lives (WebSocket, and a
 *   held streaming response: its `sendText` writes a frame into an `HttpReply` stream).
 * Each declares what its carrier can do (`carrier-kinds.ts`): the kernel reads that, not
 * the transport's name.
 * HTTP transports also implement `HttpTransport` (`http-endpoint.ts`), which hands them
 * every POST already read (`HttpPost`), whichever way it came.
 */
import type { BatchContext } from '../bayeux/batch-context.js';
import type { TransportKernel } from './transport-kernel.js';

export type { Carrier, CarrierKind } from '../session/carrier.js';
export type { PendingPoll } from '../session/session-lifecycle.js';
export type { HttpEndpoint, HttpTransport } from './http-endpoint.js';
export type { HttpReply, ResponseStream } from './http-reply.js';
export type { HttpPost, PollRequest } from './poll-request.js';
export type { TransportKernel } from './transport-kernel.js';

/** The batch failed here (a bug, not the client's fault); it was logged. */
export const BATCH_FAILED = false;
/** The batch ran to its end synchronously. */
export const BATCH_DONE = true;

/**
 * Runs a decoded batch. `BATCH_DONE` or `BATCH_FAILED` when it finished at once (the common
 * case: no promise, no closure), else a promise of either that never rejects. A failure is
 * logged as `<label> batch failed`; the transport answers it its own way.
 */
export function runBatch(
  kernel: TransportKernel,
  messages: unknown[],
  ctx: BatchContext,
  text: string,
  label: string,
): boolean | Promise<boolean> {
  let pending: void | Promise<void>;
  try {
    pending = kernel.handleBatch(messages, ctx, text.includes('__proto__'));
  } catch (err) {
    kernel.log.error({ err }, `${label} batch failed`);
    return BATCH_FAILED;
  }
  if (pending === undefined) return BATCH_DONE;
  return pending.then(
    () => BATCH_DONE,
    (err: unknown) => {
      kernel.log.error({ err }, `${label} batch failed`);
      return BATCH_FAILED;
    },
  );
}
