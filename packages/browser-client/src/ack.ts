/**
 * CometD's message acknowledgement extension, client half. The handshake asks for it
 * (`ext.ack: true`); when the server agrees, every `/meta/connect` reports the number of
 * the last batch received (`ext.ack: N`, from the server's `ext.ack` on connect replies),
 * and the server sends again, in order, every later batch it had sent — so messages lost
 * with a socket or a response arrive after the reconnect, as long as the session lives.
 *
 * With `frames` it also asks a Bayou server for numbered WebSocket frames
 * (`ext.bayou.ackFrames`): deliveries then stream at once instead of one batch per connect
 * round trip, each frame ending with a `/meta/ack` marker holding its number. The client
 * reports what it got now and then (`ext.ackFrames` on a connect that renews the held one:
 * the server forgets it and resends nothing); the first connect after a reconnect reports
 * with `ext.ack`, so what the dead socket lost comes again. On `streaming` the frames are
 * numbered the same way, and the connect that opens each stream reports them in `ext.ack`
 * (as the first connect on a new link does): the server sends every later frame again —
 * except a renewal (a refreshed token), whose older stream is read until the server ends it.
 */
import {
  ACK_MARKER_CHANNEL,
  BAYOU_EXT,
  EXT_ACK,
  EXT_ACK_FRAMES,
  isMetaChannel,
  META_CONNECT,
  META_DISCONNECT,
  META_HANDSHAKE,
} from '@bayou/protocol';
import type { Extension, Message } from './types.js';

/**
 * Set by the connection as a connect's `ext.ack` (and never sent): `'skip'` reports no
 * batch number — the connect supersedes a held one whose reply may be carrying the next
 * batch, and reporting the older number would make the server send that batch twice;
 * `'probe'` also ignores the number in the reply, which counts batches sent on the other
 * transport, not received; `'resume'` is the first connect on a new link: it asks for
 * everything after the last batch received (with numbered frames, the only connect that does).
 */
export type AckMark = 'skip' | 'probe' | 'resume';

/** ms after a frame with deliveries before the client reports it (numbered frames). */
export const FRAME_REPORT_DELAY = 1000;
/**
 * Deliveries after which the frames are reported at once, without waiting for the delay: the
 * server keeps what is unreported (up to its `maxQueuedMessages`, 10,000 by default), and a
 * background tab may run the delay's timer only once a minute.
 */
export const REPORT_AFTER_MESSAGES = 1000;

export class AckExtension implements Extension {
  /** The server agreed in the current session's handshake. */
  private enabled = false;
  /** ... and to numbered WebSocket frames. */
  private numbered = false;
  /** The number of the last batch received in this session. */
  private batch = 0;
  /** Deliveries received since the last report. */
  private unreported = 0;
  /** Deliveries since the last marker. */
  private delivered = 0;
  private reportTimer: ReturnType<typeof setTimeout> | undefined;
  /** Ids of probe connects, whose replies' numbers are not taken. */
  private readonly probes = new Set<string>();
  /**
   * @param onReport sends a connect that reports the frames received (the client's
   *   connection, reached when a report is due: never before the client is built).
   */
  constructor(
    private readonly wanted: boolean,
    private readonly frames = false,
    private readonly onReport: () => void = () => undefined,
  ) {}

  outgoing(message: Message): Message | null {
    if (message.channel === META_CONNECT) {
      const { [EXT_ACK]: mark, ...ext } = message.ext ?? {};
      if (mark === 'probe' && this.enabled && message.id !== undefined) this.probes.add(message.id);
      if (this.enabled && (mark === undefined || mark === 'resume')) {
        // A connect on `streaming` opens a stream and reports the frames received with
        // `ext.ack`: the server sends the later ones again on it. A renewal (`skip`) reports
        // nothing: the older stream is still read until the server ends it.
        const streams = message.connectionType === 'streaming';
        if (!streams && this.numbered && mark === undefined && message.connectionType === 'websocket') {
          ext[EXT_ACK_FRAMES] = this.batch;
        } else ext[EXT_ACK] = this.batch;
        this.reported();
      }
      const out: Message = { ...message, ext };
      if (Object.keys(ext).length === 0) delete out.ext;
      return out;
    }
    if (message.channel === META_DISCONNECT) this.reported();
    if (this.wanted && message.channel === META_HANDSHAKE) {
      this.enabled = false;
      this.numbered = false;
      this.batch = 0;
      this.reported();
      this.probes.clear();
      const ext: Record<string, unknown> = { ...message.ext, [EXT_ACK]: true };
      if (this.frames) {
        ext[BAYOU_EXT] = { ...(message.ext?.[BAYOU_EXT] as object | undefined), [EXT_ACK_FRAMES]: true };
      }
      return { ...message, ext };
    }
    return message;
  }

  incoming(message: Message): Message | null {
    if (!this.wanted) return message;
    if (this.numbered) {
      if (message.channel === ACK_MARKER_CHANNEL) return this.marker(message);
      if (message.successful === undefined && !isMetaChannel(message.channel)) this.delivered++;
    }
    const ack = message.ext?.[EXT_ACK];
    if (message.channel === META_HANDSHAKE && message.successful) {
      // CometD answers `ack: true`; @bayou/server `ack: { enabled: true, batch: 0 }`.
      const object = typeof ack === 'object' && ack !== null ? (ack as Ack) : null;
      this.enabled = ack === true || object?.enabled === true;
      this.numbered = this.enabled && this.frames && object?.frames === true;
    } else if (message.channel === META_CONNECT) {
      const probe = message.id !== undefined && this.probes.delete(message.id);
      if (this.enabled && !probe && typeof ack === 'number' && ack > this.batch) this.batch = ack;
    }
    return message;
  }

  /** The end of a numbered frame: take its number; report frames with deliveries soon. */
  private marker(message: Message): null {
    const n = message.ext?.[EXT_ACK];
    if (typeof n === 'number' && n > this.batch) this.batch = n;
    if (this.delivered === 0) return null;
    this.unreported += this.delivered;
    this.delivered = 0;
    if (this.unreported >= REPORT_AFTER_MESSAGES) this.report();
    else this.reportTimer ??= setTimeout(() => this.report(), FRAME_REPORT_DELAY);
    return null;
  }

  private report(): void {
    clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
    // When no connect is held to renew, the next one of the loop reports anyway; the
    // next frame with deliveries sets a timer again. Nothing repeats on its own.
    if (this.unreported > 0) this.onReport();
  }

  /** A connect carried the batch number: nothing waits to be reported. */
  private reported(): void {
    this.unreported = 0;
    clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
  }
}

interface Ack {
  enabled?: unknown;
  frames?: unknown;
}
