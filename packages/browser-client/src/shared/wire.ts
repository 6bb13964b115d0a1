/**
 * What the tabs of a shared connection say to each other on their BroadcastChannel (all
 * plain objects, structured-cloned). Tabs speak to the hub (`from`: the tab's id); the hub,
 * in the leader tab, answers one tab (`to`) or speaks to all.
 */
import { BayouError, type ErrorCode } from '../errors.js';
import type { RecordOptions } from '../records/record-codec.js';
import type { GapInfo, Position } from '../recovery.js';
import type { TransportReason } from '../transport-selector.js';
import type { Message } from '../types.js';

/** One publish (`req` false) or `/service` request of a tab. */
export interface Call {
  id: number;
  ch: string;
  data: unknown;
  req: boolean;
}

/** A call of a tab waiting for the hub's answer. */
export interface PendingCall extends Call {
  resolve(value: unknown): void;
  reject(error: BayouError): void;
}

/** Tab to hub. */
export type ToHub =
  | { t: 'hello'; from: string }
  | { t: 'bye'; from: string }
  /** `pos`: the last position the tab saw of each concrete channel of `ch`. */
  | { t: 'sub'; from: string; ch: string; pos?: Record<string, Position>; rec?: RecordOptions }
  | { t: 'unsub'; from: string; ch: string }
  | { t: 'call'; from: string; calls: Call[] };

/** Hub to tabs. */
export type FromHub =
  /** A new hub leads (its id): tabs send their hello, subscriptions and unanswered calls again. */
  | { t: 'lead'; hub: string }
  /** The session's state; `reason`: why its transport is the one in use (the `transport` event's). */
  | { t: 'up'; state: string; transport: string | null; clientId: string | null; reason: TransportReason }
  /** A delivery to the hub's subscription `s`. */
  | { t: 'd'; s: string; m: Message }
  /** The subscribe's answer; `pos`: the hub's position on the channel (where it started). */
  | { t: 'ok'; to: string; ch: string; error?: PlainError; pos?: Position }
  | { t: 'res'; to: string; id: number; value?: unknown; error?: PlainError }
  | { t: 'gap'; info: GapInfo }
  | { t: 'err'; error: PlainError; fatal: boolean };

export type Wire = ToHub | FromHub;

export function isToHub(m: Wire): m is ToHub {
  return (m as { from?: string }).from !== undefined;
}

/** A `BayouError` as plain data: its class does not survive a BroadcastChannel. */
export interface PlainError {
  code: string;
  message: string;
  reply: Message | null;
}

export function plainError(error: unknown): PlainError {
  const e = error as { code?: unknown; message?: unknown; reply?: Message | null };
  return {
    code: typeof e?.code === 'string' ? e.code : 'BAYOU_ERR_TRANSPORT',
    message: typeof e?.message === 'string' ? e.message : String(error),
    reply: e?.reply ?? null,
  };
}

export function toBayouError(e: PlainError): BayouError {
  return new BayouError(e.code as ErrorCode, e.message, e.reply);
}
