/**
 * The Bayeux session as the connection sees it: the handshake, the `/meta/connect`
 * messages (with a refreshed token and the ack extension's mark) and the server's advice.
 * Which transport carries them, and what to do when one fails, is the connection's business.
 */
import {
  BAYEUX_VERSION,
  BAYOU_EXT,
  EXT_ACK,
  EXT_AUTH,
  EXT_COMPACT,
  EXT_HEARTBEAT,
  EXT_RECORDS,
  META_CONNECT,
  META_HANDSHAKE,
} from '@bayou/protocol';
import type { AckMark } from './ack.js';
import { isFinalHandshakeRefusal, Refusal, reconnectAdvice, stopError } from './advice.js';
import type { Dispatcher } from './dispatcher.js';
import { BayouError, ErrorCodes } from './errors.js';
import type { ResolvedOptions } from './options.js';
import type { TokenRefresh } from './token-refresh.js';
import type { TransportSelector } from './transport-selector.js';
import type { Transport } from './transports/transport.js';
import type { Advice, Message } from './types.js';

export type SessionOptions = Pick<ResolvedOptions, 'handshake' | 'connectTimeout' | 'compactRecords'>;

export class BayeuxSession {
  /** The session id, once handshaken; `null` makes the next `establish` handshake. */
  clientId: string | null = null;
  /**
   * A handshake succeeded but no connect of its session has yet: the next one to succeed
   * starts a new session for the client, whichever attempt or transport carries it.
   */
  private unannounced = false;
  /** The server's latest advice: how long it holds a connect, how long to wait between them. */
  readonly advice = { timeout: 30000, interval: 0 };
  /**
   * The server's heartbeat interval (ms) when it granted the session the idle heartbeat
   * (`ext.bayou.heartbeat`), else 0: on a WebSocket it then sends `[]` that often, and
   * holds each connect as long as its advice says.
   */
  heartbeat = 0;

  constructor(
    private readonly options: SessionOptions,
    private readonly dispatcher: Dispatcher,
    private readonly selector: TransportSelector,
    private readonly tokens: TokenRefresh,
  ) {}

  /**
   * Handshakes when there is no session, then sends the first connect on `transport`;
   * true for a new session. `live` says whether the attempt still counts.
   */
  async establish(transport: Transport, live: () => boolean): Promise<boolean> {
    if (this.clientId === null) await this.handshake(transport, live);
    let reply = await this.connect(transport, 0, 'resume');
    if (!reply.successful && reconnectAdvice(reply) === 'handshake' && !this.unannounced && live()) {
      this.clientId = null;
      await this.handshake(transport, live);
      reply = await this.connect(transport, 0, 'resume');
    }
    if (!reply.successful) {
      if (reconnectAdvice(reply) === 'none') throw stopError(reply);
      if (reconnectAdvice(reply) === 'handshake') this.clientId = null;
      throw new Refusal(reply);
    }
    this.takeAdvice(reply.advice);
    const newSession = this.unannounced;
    this.unannounced = false;
    return newSession;
  }

  private async handshake(transport: Transport, live: () => boolean): Promise<void> {
    const h = this.options.handshake;
    let ext = typeof h === 'function' ? await h() : h;
    const token = await this.tokens.forHandshake();
    if (token !== undefined)
      ext = { ...ext, [EXT_AUTH]: { ...(ext?.[EXT_AUTH] as object | undefined), token } };
    if (!live()) throw new BayouError(ErrorCodes.DISCONNECTED, 'stopped');
    const message: Message = {
      channel: META_HANDSHAKE,
      version: BAYEUX_VERSION,
      minimumVersion: BAYEUX_VERSION,
      supportedConnectionTypes: this.selector.names,
      advice: { timeout: 60000, interval: 0 },
    };
    // Bayou's features: records (tagged, compact if wanted) and the idle heartbeat (the
    // server's pings instead of a connect every few seconds on an idle WebSocket).
    message.ext = {
      ...ext,
      [BAYOU_EXT]: {
        ...(ext?.[BAYOU_EXT] as object),
        [EXT_RECORDS]: true,
        [EXT_COMPACT]: this.options.compactRecords,
        [EXT_HEARTBEAT]: true,
      },
    };
    const reply = await this.dispatcher.request(transport, message, this.options.connectTimeout);
    if (!reply.successful || typeof reply.clientId !== 'string') {
      throw isFinalHandshakeRefusal(reply) ? stopError(reply) : new Refusal(reply);
    }
    this.clientId = reply.clientId;
    this.heartbeat =
      Number((reply.ext?.[BAYOU_EXT] as Record<string, unknown> | undefined)?.[EXT_HEARTBEAT]) || 0;
    this.unannounced = true;
    this.selector.serverOffers(reply.supportedConnectionTypes);
    this.takeAdvice(reply.advice);
    if (!this.selector.offers(transport.name)) {
      throw new BayouError(ErrorCodes.NO_TRANSPORT, `the server does not offer ${transport.name}`);
    }
  }

  /**
   * One `/meta/connect`; `hold` overrides the server's hold timeout (0: answer at once);
   * `mark` tells the ack extension how to number it.
   */
  connect(transport: Transport, hold?: number, mark?: AckMark): Promise<Message> {
    const message: Message = {
      channel: META_CONNECT,
      clientId: this.clientId ?? '',
      connectionType: transport.name,
    };
    // A stream is held as long as the server keeps it: no hold of our own.
    if (hold !== undefined && !transport.streamEnd) message.advice = { timeout: hold };
    if (mark !== undefined) message.ext = { [EXT_ACK]: mark };
    // A refreshed token goes with every connect until one of them succeeds.
    const token = this.tokens.pending;
    if (token !== null) message.ext = { ...message.ext, [EXT_AUTH]: { token } };
    const wait = (hold ?? this.advice.timeout) + this.options.connectTimeout;
    const reply = this.dispatcher.request(transport, message, wait);
    if (token === null) return reply;
    return reply.then((r) => {
      if (r.successful) this.tokens.accepted(token);
      return r;
    });
  }

  takeAdvice(advice: Advice | undefined): void {
    if (!advice) return;
    if (typeof advice.timeout === 'number' && advice.timeout >= 0) this.advice.timeout = advice.timeout;
    if (typeof advice.interval === 'number' && advice.interval >= 0) this.advice.interval = advice.interval;
  }
}
