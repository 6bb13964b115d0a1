/**
 * CometD's message acknowledgement extension, client half. The handshake asks for it
 * (`ext.ack: true`); when the server agrees, every `/meta/connect` reports the number of
 * the last batch received (`ext.ack: N`, from the server's `ext.ack` on connect replies),
 * and the server sends again, in order, every later batch it had sent — so messages lost
 * with a socket or a response arrive after the reconnect, as long as the session lives.
 */
import type { Extension, Message } from './types.js';

/**
 * Set by the connection as a connect's `ext.ack` (and never sent): `'skip'` reports no
 * batch number — the connect supersedes a held one whose reply may be carrying the next
 * batch, and reporting the older number would make the server send that batch twice;
 * `'probe'` also ignores the number in the reply, which counts batches sent on the other
 * transport, not received.
 */
export type AckMark = 'skip' | 'probe';

export class AckExtension implements Extension {
  /** The server agreed in the current session's handshake. */
  private enabled = false;
  /** The number of the last batch received in this session. */
  private batch = 0;
  /** Ids of probe connects, whose replies' numbers are not taken. */
  private readonly probes = new Set<string>();

  constructor(private readonly wanted: boolean) {}

  outgoing(message: Message): Message | null {
    if (message.channel === '/meta/connect') {
      const { ack: mark, ...ext } = message.ext ?? {};
      if (mark === 'probe' && this.enabled && message.id !== undefined) this.probes.add(message.id);
      if (this.enabled && mark === undefined) ext.ack = this.batch;
      const out: Message = { ...message, ext };
      if (Object.keys(ext).length === 0) delete out.ext;
      return out;
    }
    if (this.wanted && message.channel === '/meta/handshake') {
      this.enabled = false;
      this.batch = 0;
      this.probes.clear();
      return { ...message, ext: { ...message.ext, ack: true } };
    }
    return message;
  }

  incoming(message: Message): Message | null {
    if (!this.wanted) return message;
    const ack = message.ext?.ack;
    if (message.channel === '/meta/handshake' && message.successful) {
      // CometD answers `ack: true`; @bayou/server `ack: { enabled: true, batch: 0 }`.
      this.enabled =
        ack === true || (typeof ack === 'object' && ack !== null && (ack as Ack).enabled === true);
    } else if (message.channel === '/meta/connect') {
      const probe = message.id !== undefined && this.probes.delete(message.id);
      if (this.enabled && !probe && typeof ack === 'number' && ack > this.batch) this.batch = ack;
    }
    return message;
  }
}

interface Ack {
  enabled?: unknown;
}
