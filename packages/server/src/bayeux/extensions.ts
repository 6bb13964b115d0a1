/**
 * The server extension pipeline, as CometD's `BayeuxServer.Extension`: every incoming
 * message passes each extension's `incoming` before its handler, every meta reply passes
 * `outgoing` before it is sent, and a `/meta/connect` reply carrying deliveries asks
 * `connectBatch` for its `ext`. Built-in features negotiated in `ext` (ack, replay, auth)
 * are extensions like an application's own (`app.bayou.addExtension`).
 *
 * The pipeline is declared, not whatever order files registered in: each extension names
 * its `stage` — `guard` (limits, auth, the browser binding: who may send this at all),
 * `protocol` (ack, replay, ordered long-polling, streams: Bayou's and CometD's features),
 * `app` (the application's, the default) — and runs in stage order, registration order
 * within a stage. `incoming` only decides: a message is refused or passes, and no session
 * changes on the way. What a message does to its session (an acknowledgement, a delivery
 * mode) happens in `accepted`, once every extension let the message through, so a message
 * refused by any stage leaves its session exactly as it was.
 *
 * Per-recipient work stays off the hot path: the one hook that runs per delivered message,
 * `beforeEnqueue`, runs only for the sessions an extension hooked (`addEnqueueHook`).
 */
import type { Message } from '@bayou/protocol';
import type { MaybePromise } from '../engine/engine.js';
import type { EnqueueHook, ExtensionSession } from '../session/session.js';
import type { RequestInfo } from '../types.js';

/**
 * An extension's refusal of an incoming message: a Bayeux error string, or the error with
 * the advice to send along (`{ reconnect: 'handshake' }` after a token expired, a retry
 * interval after a rate limit).
 */
export type Refusal = string | { error: string; advice?: Readonly<Record<string, unknown>> };

/** A reply about to be sent; `ext` may be added or extended. */
export type Reply = Record<string, unknown> & { channel?: string; ext?: Record<string, unknown> };

/** Where an extension runs in the pipeline: guards first, then the protocol's, then the app's. */
export type ExtensionStage = 'guard' | 'protocol' | 'app';

/** Stage order; an extension without a stage is the app's. */
export const EXTENSION_STAGES: readonly ExtensionStage[] = Object.freeze(['guard', 'protocol', 'app']);

export interface Extension {
  /** Shown in logs when the extension fails. */
  readonly name: string;
  /** The pipeline stage it runs in (`'app'` when not given). */
  readonly stage?: ExtensionStage;
  /**
   * A message from a client, before its handler. `session` is the sender's (null for a
   * handshake or an unknown clientId); `request` describes the HTTP request or WebSocket
   * upgrade it came on (client IP, browser cookie, TLS). Return a Bayeux error string
   * (`"403::denied"`), or `{ error, advice }`, to answer the message with that error
   * instead of handling it. It decides only: a change to the session belongs in `accepted`,
   * which runs once no extension refused the message.
   */
  incoming?(
    message: Message,
    session: ExtensionSession | null,
    request: RequestInfo,
  ): MaybePromise<Refusal | undefined>;
  /**
   * `message` passed every extension's `incoming` and goes to its handler now: the place to
   * change `session` for it (an acknowledgement, a delivery mode). Runs synchronously, in
   * stage order, also after an extension decided asynchronously.
   */
  accepted?(message: Message, session: ExtensionSession, request: RequestInfo): void;
  /** A meta reply about to go back for `request` (a connect reply only when answered at once). */
  outgoing?(reply: Reply, request: Message, session: ExtensionSession | null): void;
  /**
   * A held `/meta/connect` is answered carrying `messages` (serialized); `immediate` when it
   * was answered at once without any. Returns fields to merge into the reply's `ext`.
   */
  connectBatch?(
    session: ExtensionSession,
    messages: readonly string[],
    immediate: boolean,
  ): Record<string, unknown> | undefined;
  /**
   * `session` is about to be subscribed to the concrete channel `channel` (not a wildcard,
   * not a record), before anything published on it can reach the session: the place to
   * start holding live messages (in `beforeEnqueue`) so that none overtakes what
   * `subscribing` fetches. Runs synchronously.
   */
  beforeSubscribe?(session: ExtensionSession, channel: string, message: Message): void;
  /**
   * `session` was just subscribed to the concrete channel `channel` (not a wildcard, not a
   * record), before the reply is sent: the place to fetch what it missed. May return a
   * Bayeux error string to refuse the subscription.
   */
  subscribing?(
    session: ExtensionSession,
    channel: string,
    message: Message,
  ): MaybePromise<string | undefined | undefined>;
  /** The subscribe reply for `channel` went out: deliveries prepared in `subscribing` may follow it. */
  subscribed?(session: ExtensionSession, channel: string): void;
  /** `session` left the concrete channel `channel` (an unsubscribe, or a subscribe undone). */
  unsubscribed?(session: ExtensionSession, channel: string): void;
  /**
   * A publication the subscription index is about to queue for a session this extension
   * hooked (`session.addEnqueueHook(extension)`); see `EnqueueHook`.
   */
  beforeEnqueue?: EnqueueHook['beforeEnqueue'];
  /** A session ended. */
  removed?(session: ExtensionSession): void;
  /**
   * A draining node hands `session` over to another node (issue #35): the extension's
   * per-session state as plain JSON, or `undefined` for none. Given back to `adopt` there.
   */
  handOver?(session: ExtensionSession): unknown;
  /** `session` was adopted from a draining node: `state` is what `handOver` gave there. */
  adopt?(session: ExtensionSession, state: unknown): void;
}

/** Thrown to the caller when an extension itself fails: the message gets a 500 reply. */
export class ExtensionFailure extends Error {
  constructor(
    readonly extension: string,
    override readonly cause: unknown,
  ) {
    super(`extension ${extension} failed`);
    this.name = 'ExtensionFailure';
  }
}

export class ExtensionPipeline {
  private list: Extension[] = [];
  private incomingList: Extension[] = [];
  private acceptedList: Extension[] = [];
  private outgoingList: Extension[] = [];
  private batchList: Extension[] = [];
  private subscribeList: Extension[] = [];

  add(extension: Extension): void {
    const stage = extension.stage ?? 'app';
    if (!EXTENSION_STAGES.includes(stage))
      throw new TypeError(
        `extension ${extension.name}: stage must be one of ${EXTENSION_STAGES.join(', ')} (got ${String(stage)})`,
      );
    // Stable: registration order within a stage.
    this.list = [...this.list, extension].sort((a, b) => rank(a) - rank(b));
    this.incomingList = this.list.filter((e) => e.incoming !== undefined);
    this.acceptedList = this.list.filter((e) => e.accepted !== undefined);
    this.outgoingList = this.list.filter((e) => e.outgoing !== undefined);
    this.batchList = this.list.filter((e) => e.connectBatch !== undefined);
    this.subscribeList = this.list.filter(
      (e) =>
        e.beforeSubscribe !== undefined ||
        e.subscribing !== undefined ||
        e.subscribed !== undefined ||
        e.unsubscribed !== undefined,
    );
  }

  /** Runs `beforeSubscribe` of each extension, before the session joins the channel. */
  beforeSubscribe(session: ExtensionSession, channel: string, message: Message): undefined {
    for (const ext of this.subscribeList) ext.beforeSubscribe?.(session, channel, message);
    return undefined;
  }

  /** Runs `subscribing` of each extension; an error string refuses the subscription. */
  subscribing(
    session: ExtensionSession,
    channel: string,
    message: Message,
  ): MaybePromise<string | undefined> {
    const pending: Promise<string | undefined | undefined>[] = [];
    for (const ext of this.subscribeList) {
      if (ext.subscribing === undefined) continue;
      const r = ext.subscribing(session, channel, message);
      if (r instanceof Promise) pending.push(r);
      else if (typeof r === 'string') return r;
    }
    if (pending.length === 0) return undefined;
    return Promise.all(pending).then((all) => all.find((r): r is string => typeof r === 'string'));
  }

  subscribed(session: ExtensionSession, channel: string): void {
    for (const ext of this.subscribeList) ext.subscribed?.(session, channel);
  }

  unsubscribed(session: ExtensionSession, channel: string): void {
    for (const ext of this.subscribeList) ext.unsubscribed?.(session, channel);
  }

  get size(): number {
    return this.list.length;
  }

  /** The extensions' names in the order they run, for logs and tests. */
  get order(): readonly string[] {
    return this.list.map((e) => `${e.stage ?? 'app'}:${e.name}`);
  }

  /**
   * Runs `incoming` of each extension in stage order, then, when none refused, `accepted`
   * of each; returns the refusal, or a promise when an extension answered asynchronously.
   */
  incoming(
    message: Message,
    session: ExtensionSession | null,
    request: RequestInfo,
  ): MaybePromise<Refusal | undefined> {
    const verdict = this.decide(message, session, request, 0);
    if (verdict instanceof Promise)
      return verdict.then((v) => (v === undefined ? this.accept(message, session, request) : v));
    return verdict === undefined ? this.accept(message, session, request) : verdict;
  }

  private accept(message: Message, session: ExtensionSession | null, request: RequestInfo): undefined {
    if (session === null) return undefined;
    for (const ext of this.acceptedList) {
      try {
        (ext.accepted as NonNullable<Extension['accepted']>)(message, session, request);
      } catch (err) {
        throw new ExtensionFailure(ext.name, err);
      }
    }
    return undefined;
  }

  private decide(
    message: Message,
    session: ExtensionSession | null,
    request: RequestInfo,
    from: number,
  ): MaybePromise<Refusal | undefined> {
    const list = this.incomingList;
    for (let i = from; i < list.length; i++) {
      const ext = list[i] as Extension;
      let verdict: MaybePromise<Refusal | undefined>;
      try {
        verdict = (ext.incoming as NonNullable<Extension['incoming']>)(message, session, request);
      } catch (err) {
        throw new ExtensionFailure(ext.name, err);
      }
      if (verdict instanceof Promise) {
        return verdict.then(
          (v) => (v !== undefined ? v : this.decide(message, session, request, i + 1)),
          (err: unknown) => {
            throw new ExtensionFailure(ext.name, err);
          },
        );
      }
      if (verdict !== undefined) return verdict;
    }
    return undefined;
  }

  outgoing(reply: Reply, request: Message, session: ExtensionSession | null): void {
    for (const ext of this.outgoingList) {
      try {
        (ext.outgoing as NonNullable<Extension['outgoing']>)(reply, request, session);
      } catch (err) {
        throw new ExtensionFailure(ext.name, err);
      }
    }
  }

  /** The `ext` of a connect reply carrying `messages`, serialized, or `undefined`. */
  connectExt(session: ExtensionSession, messages: readonly string[], immediate: boolean): string | undefined {
    if (this.batchList.length === 0) return undefined;
    let ext: Record<string, unknown> | undefined;
    for (const e of this.batchList) {
      const fields = (e.connectBatch as NonNullable<Extension['connectBatch']>)(session, messages, immediate);
      if (fields !== undefined) ext = ext === undefined ? fields : Object.assign(ext, fields);
    }
    return ext === undefined ? undefined : JSON.stringify(ext);
  }

  removed(session: ExtensionSession): void {
    for (const e of this.list) e.removed?.(session);
  }

  /** Each extension's state of `session` to hand over, by extension name. */
  handOver(session: ExtensionSession): Record<string, unknown> {
    const states: Record<string, unknown> = {};
    for (const e of this.list) {
      const state = e.handOver?.(session);
      if (state !== undefined) states[e.name] = state;
    }
    return states;
  }

  /** Gives each extension its state of an adopted session back (`handOver` on the node that drained). */
  adopt(session: ExtensionSession, states: Record<string, unknown>): void {
    for (const e of this.list)
      if (e.adopt !== undefined && e.name in states) e.adopt(session, states[e.name]);
  }
}

function rank(extension: Extension): number {
  return EXTENSION_STAGES.indexOf(extension.stage ?? 'app');
}
