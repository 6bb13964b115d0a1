/**
 * The client half of Bayou's record encodings. As an extension it asks for records in the
 * handshake (`ext.bayou`), adds each record subscription's field subset and frequency to
 * its subscribe message (`ext.record`), and turns compact messages (`/~r`, aliases and
 * field ids) back into ordinary ones — `{ channel: subject, data: fields, ext: { r } }` —
 * before they reach the subscriptions.
 */
import {
  COMPACT_RECORD_CHANNEL,
  EXT_RECORD_KIND,
  EXT_RECORD_REQUEST,
  META_HANDSHAKE,
  META_SUBSCRIBE,
} from '@bayou/protocol';
import type { Extension, Message } from '../types.js';

/** What a record subscription asks the server for. */
export interface RecordOptions {
  /** Only these fields (default: all). */
  fields?: readonly string[];
  /** At most this many updates per second; the server clamps it to its bounds. */
  maxFrequency?: number;
}

export class RecordCodec implements Extension {
  /** Subject of each alias and name of each field id, as the server defined them. */
  private readonly subjects = new Map<number, string>();
  private readonly names = new Map<string, string>();
  /** What each record subject's subscribe message asks for. */
  readonly requests = new Map<string, RecordOptions>();

  outgoing(message: Message): Message | null {
    if (message.channel === META_HANDSHAKE) {
      // Aliases and ids belong to a server session: start afresh with each handshake (which
      // asks for records in `ext.bayou`, see `session.ts`).
      this.subjects.clear();
      this.names.clear();
    }
    if (message.channel === META_SUBSCRIBE && typeof message.subscription === 'string') {
      const request = this.requests.get(message.subscription);
      if (request !== undefined && (request.fields !== undefined || request.maxFrequency !== undefined)) {
        return { ...message, ext: { ...message.ext, [EXT_RECORD_REQUEST]: request } };
      }
    }
    return message;
  }

  incoming(message: Message): Message | null {
    if (message.channel !== COMPACT_RECORD_CHANNEL || !Array.isArray(message.data)) return message;
    const [alias, ids, kind, defs, subject] = message.data as [
      number,
      Record<string, unknown>,
      's' | 'd',
      Record<string, string> | undefined,
      string | undefined,
    ];
    if (typeof subject === 'string') this.subjects.set(alias, subject);
    if (defs) for (const id of Object.keys(defs)) this.names.set(id, defs[id] as string);
    const channel = this.subjects.get(alias);
    if (channel === undefined) return null; // an alias we were never told about: drop it
    const data: Record<string, unknown> = {};
    for (const id of Object.keys(ids)) {
      const name = this.names.get(id);
      if (name !== undefined) data[name] = ids[id];
    }
    return { channel, data, ext: { [EXT_RECORD_KIND]: kind } };
  }
}
