/**
 * The record a draining node writes for each session it hands over (`session-handover.ts`),
 * and the subscribe with which the adopter recovers a channel of it.
 */
import { EXT_REPLAY, META_SUBSCRIBE, type Message } from '@bayou/protocol';
import type { StreamPosition } from '../engine/engine.js';
import type { DeliveryMode, Session } from '../session/session.js';

/** What a draining node writes for a session. */
export interface SessionRecord {
  readonly v: 1;
  readonly id: string;
  readonly browserId: string | null;
  readonly auth: Record<string, unknown> | null;
  readonly handshakeExt: Record<string, unknown> | undefined;
  readonly data: Record<string, unknown>;
  readonly connected: boolean;
  readonly mode: DeliveryMode;
  readonly subscriptions: string[];
  /** By concrete channel (subscribed, or matched by a wildcard): where the session stands on it. */
  readonly positions: Record<string, StreamPosition>;
  readonly queue: string[];
  readonly ext: Record<string, unknown>;
}

/** The subscribe that recovers `channel` for `session` from `position` (a resubscription would send it). */
export function recovery(session: Session, channel: string, position: StreamPosition | undefined): Message {
  const message: Message = { channel: META_SUBSCRIBE, clientId: session.id, subscription: channel };
  if (position !== undefined) message.ext = { [EXT_REPLAY]: { [channel]: position } };
  return message;
}
