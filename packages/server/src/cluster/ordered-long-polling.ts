/**
 * Keeps long-polling deliveries in order behind a balancer with no affinity. On one node,
 * queued messages may ride along on any response of a session (a publish reply, say).
 * In a cluster two responses of one session can travel different ways (each relayed by
 * whichever node the balancer picked, through Redis) and reach the client in the other
 * order, so a message could overtake the one before it. With this extension a
 * long-polling session receives messages only in `/meta/connect` replies, which the
 * client sends one after the other, so they arrive in the order they were queued.
 * WebSocket sessions keep streaming (one connection, one order). Carriers are told apart
 * by what their kind can do: a connect naming one that does not push is a long-poll's.
 */
import { META_CONNECT, type Message } from '@bayou/protocol';
import type { Extension } from '../bayeux/extensions.js';
import type { ExtensionSession } from '../session/session.js';
import type { ConnectionTypes } from '../types.js';

/** Marks, in `extensionState`, a session this extension switched (not one the ack extension did). */
const SWITCHED = true;

export class OrderedLongPolling implements Extension {
  readonly name = 'ordered-long-polling';
  readonly stage = 'protocol';

  constructor(
    /** The kind a connect's `connectionType` names (`transports/carrier-kinds.ts`). */
    private readonly connectionTypes: ConnectionTypes,
  ) {}

  /** Only a connect that passed every stage switches its session's delivery. */
  accepted(message: Message, session: ExtensionSession): void {
    if (message.channel !== META_CONNECT) return;
    const named = this.connectionTypes((message as { connectionType?: unknown }).connectionType);
    const polling = named !== undefined && !named.pushes;
    if (polling && session.deliveryMode !== 'connect-reply') {
      session.requestDelivery('connect-reply');
      session.extensionState.set(this, SWITCHED);
    } else if (!polling && session.deliveryMode === 'connect-reply' && session.extensionState.has(this)) {
      // It moved to a WebSocket: stream again.
      session.requestDelivery('push');
      session.extensionState.delete(this);
    }
  }
}
