/**
 * Pipelined publishes within one batch. On an engine whose publish is a promise (Redis),
 * a session's consecutive publishes are handed to the engine one after the other without
 * waiting for each acknowledgement: they leave in one write (the engine corks its
 * connection for the turn) and their fan-out comes back together. Their replies are
 * chained, so they settle in the order of the batch; any other reply of the batch made
 * while publishes are in flight (a refusal of a later publish) joins the chain behind
 * them. A message that is not a broadcast publish (a meta message, a service call) waits
 * until every publish before it is acknowledged, as it would on the memory engine.
 */
import { channelKind } from '@bayou/protocol';
import type { Session } from '../session/session.js';

/** The part of a batch's context that tracks its publishes in flight. */
export interface PipelineState {
  /** Acknowledgements of this batch's publishes still to come, chained in order. */
  inFlight: Promise<void> | null;
  /** While an acknowledgement is answered: its replies are placed, not chained. */
  settling: boolean;
  /** The session whose queue took this batch's latest reply, and where (`repliedAt`). */
  repliedTo: Session | null;
  repliedAt: number;
  /** The earlier batch of the same socket this one goes on behind: its `repliedTo/At` are shared. */
  behind: PipelineState | null;
  /** Set once every message was handled and only the acknowledgements are awaited. */
  draining: boolean;
}

/** Whether `raw` is a publish on a broadcast channel, which may go out behind publishes in flight. */
export function pipelinable(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null) return false;
  const channel = (raw as { channel?: unknown }).channel;
  return typeof channel === 'string' && channelKind(channel) === 'broadcast';
}

/**
 * Answers an engine acknowledgement once it and every earlier one of the batch are in:
 * `answer` runs in batch order, its replies placed directly (not behind the chain).
 */
export function answerInOrder<T>(
  ctx: PipelineState,
  accepted: Promise<T>,
  answer: (result: T) => void,
): void {
  const prev = ctx.inFlight;
  const run = (result: T): void => {
    ctx.settling = true;
    try {
      answer(result);
    } finally {
      ctx.settling = false;
    }
  };
  ctx.inFlight = (prev === null ? accepted : prev.then(() => accepted)).then(run);
}

/** Runs `place` behind the publishes in flight when there are any (and this is not their own answer). */
export function behindInFlight(ctx: PipelineState, place: () => void): boolean {
  const tail = ctx.inFlight;
  if (tail === null || ctx.settling) return false;
  ctx.inFlight = tail.then(place);
  return true;
}

/** Resolves once every publish of the batch in flight is acknowledged and answered. */
export function inFlightSettled(ctx: PipelineState): Promise<void> {
  const tail = ctx.inFlight as Promise<void>;
  return tail.then(() => {
    if (ctx.inFlight === tail) ctx.inFlight = null;
    else return inFlightSettled(ctx);
  });
}

/**
 * Where a pipelined publish's reply goes in its session's queue: at `mark` (ahead of the
 * publisher's own copy, which may be back first), but never ahead of the reply of an
 * earlier reply of the same batch (or of the batches it goes on behind).
 */
export function pipelinedMark(ctx: PipelineState, session: Session, mark: number): number {
  const m = ctx.behind ?? ctx;
  return m.repliedTo === session && m.repliedAt >= mark ? m.repliedAt + 1 : mark;
}

/** Records where a reply went in `session`'s queue (shared with the batches chained behind). */
export function replied(ctx: PipelineState, session: Session, at: number): void {
  const m = ctx.behind ?? ctx;
  m.repliedTo = session;
  m.repliedAt = at;
}

/** Makes `ctx` go on behind `previous`, a batch of the same socket whose publishes are in flight. */
export function goBehind(ctx: PipelineState, previous: PipelineState, answered: Promise<void>): void {
  ctx.inFlight = answered;
  ctx.behind = previous.behind ?? previous;
}
