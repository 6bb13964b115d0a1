/**
 * Sends messages through a transport and matches the replies to them: gives every
 * message an id, runs the extensions on the way out and in, and watches for replies that
 * do not come. It knows nothing about sessions or state; it reports a silent transport to
 * its owner, which decides what that means.
 */
import { isMetaChannel } from '@bayou/protocol';
import { BayouError, ErrorCodes } from './errors.js';
import type { Transport } from './transports/transport.js';
import type { Extension, Message } from './types.js';

/** A message waiting for its reply. */
export interface Outgoing {
  message: Message;
  /**
   * A `/service` request: a successful reply without `data` is only the publish
   * acknowledgement, and the answer (same id, with `data`) follows; wait for it.
   */
  awaitData?: boolean;
  onReply(reply: Message): void;
  /** `retry` is false when the client stopped; true when only the transport failed. */
  onFail(error: BayouError, retry: boolean): void;
}

/** The messages of one `send`, sharing one reply timer. */
interface Batch {
  remaining: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface Pending {
  item: Outgoing;
  transport: Transport;
  batch: Batch;
}

export interface DispatcherHooks {
  /** A message that is no reply: a delivery to the client's subscriptions. */
  onDelivery(message: Message): void;
  /** Some reply did not arrive within its timeout on `transport`. */
  onTimeout(transport: Transport, error: BayouError): void;
}

/** How much one frame or request may carry; the server refuses more (WS 1009, HTTP 413). */
export interface FrameLimits {
  maxBatchMessages: number;
  maxFrameBytes: number;
}

export class Dispatcher {
  readonly extensions: Extension[] = [];
  private readonly pending = new Map<string, Pending>();
  /** Acknowledged requests waiting for their answer; resolved with the ack if none comes. */
  private readonly answers = new Map<
    string,
    { item: Outgoing; ack: Message; timer: ReturnType<typeof setTimeout> }
  >();
  /** Messages whose request failed alone, waiting out a delay before they are failed for resending. */
  private readonly deferred = new Map<
    Outgoing,
    { transport: Transport; timer: ReturnType<typeof setTimeout> }
  >();
  private readonly answerTimeout: number;
  private readonly hooks: DispatcherHooks;
  private readonly limits: FrameLimits;
  private nextId = 0;

  constructor(hooks: DispatcherHooks, answerTimeout: number, limits: FrameLimits) {
    this.hooks = hooks;
    this.answerTimeout = answerTimeout;
    this.limits = limits;
  }

  /**
   * Sends `items` in as few frames as the limits allow (usually one); if any message is
   * unanswered after `timeout` ms, reports the transport. A message that alone exceeds
   * `maxFrameBytes` fails at once: sending it would only make the server drop the
   * connection, again after every reconnect.
   */
  send(transport: Transport, items: Outgoing[], timeout: number): void {
    const { maxBatchMessages, maxFrameBytes } = this.limits;
    let frame: [Outgoing, Message][] = [];
    let bytes = 2; // the brackets of the array
    for (const item of items) {
      const message = this.outgoing({ ...item.message, id: String(++this.nextId) });
      if (message === null) {
        item.onFail(new BayouError(ErrorCodes.REJECTED, 'dropped by an extension'), false);
        continue;
      }
      const size = utf8Length(JSON.stringify(message)) + 1;
      if (size + 2 > maxFrameBytes) {
        item.onFail(
          new BayouError(ErrorCodes.TOO_LARGE, `message of ${size} bytes exceeds maxFrameBytes`),
          false,
        );
        continue;
      }
      if (frame.length === maxBatchMessages || bytes + size > maxFrameBytes) {
        this.sendFrame(transport, frame, timeout);
        frame = [];
        bytes = 2;
      }
      frame.push([item, message]);
      bytes += size;
    }
    if (frame.length > 0) this.sendFrame(transport, frame, timeout);
  }

  private sendFrame(transport: Transport, frame: [Outgoing, Message][], timeout: number): void {
    const batch: Batch = { remaining: frame.length, timer: undefined };
    const messages: Message[] = [];
    for (const [item, message] of frame) {
      this.pending.set(message.id as string, { item, transport, batch });
      messages.push(message);
    }
    batch.timer = setTimeout(() => {
      batch.timer = undefined;
      this.hooks.onTimeout(transport, new BayouError(ErrorCodes.TRANSPORT, `no reply within ${timeout} ms`));
    }, timeout);
    transport.send(messages);
  }

  /** Sends one message and resolves with its reply; rejects when the transport fails. */
  request(transport: Transport, message: Message, timeout: number): Promise<Message> {
    return new Promise((resolve, reject) => {
      this.send(transport, [{ message, onReply: resolve, onFail: reject }], timeout);
    });
  }

  /** Handles messages a transport received. */
  receive(messages: Message[]): void {
    for (const raw of messages) {
      const message = this.incoming(raw);
      if (message === null) continue;
      const isReply = message.successful !== undefined || isMetaChannel(message.channel);
      if (!isReply) {
        this.hooks.onDelivery(message);
        continue;
      }
      if (message.id === undefined) continue;
      const id = message.id;
      const answer = this.answers.get(id);
      if (answer) {
        this.answers.delete(id);
        clearTimeout(answer.timer);
        answer.item.onReply(message);
        continue;
      }
      const entry = this.pending.get(id);
      if (!entry) continue;
      this.settle(id, entry);
      if (entry.item.awaitData && message.successful && !('data' in message)) {
        const timer = setTimeout(() => {
          this.answers.delete(id);
          entry.item.onReply(message);
        }, this.answerTimeout);
        this.answers.set(id, { item: entry.item, ack: message, timer });
        continue;
      }
      entry.item.onReply(message);
    }
  }

  /**
   * The request carrying `messages` failed alone: after `delay` ms their senders are told
   * (`onFail(error, true)`) and send them again. A `fail` before then tells them at once.
   */
  failLater(messages: Message[], error: BayouError, delay: number): void {
    for (const message of messages) {
      const id = message.id;
      const entry = id === undefined ? undefined : this.pending.get(id);
      if (id === undefined || entry === undefined) continue;
      this.settle(id, entry);
      const timer = setTimeout(() => {
        this.deferred.delete(entry.item);
        entry.item.onFail(error, true);
      }, delay);
      this.deferred.set(entry.item, { transport: entry.transport, timer });
    }
  }

  /** Fails every message waiting on `transport`, or on any transport when none is given. */
  fail(transport: Transport | null, error: BayouError, retry: boolean): void {
    const failed: Outgoing[] = [];
    for (const [item, later] of this.deferred) {
      if (transport !== null && later.transport !== transport) continue;
      clearTimeout(later.timer);
      this.deferred.delete(item);
      failed.push(item);
    }
    for (const [id, entry] of this.pending) {
      if (transport !== null && entry.transport !== transport) continue;
      this.settle(id, entry);
      failed.push(entry.item);
    }
    if (transport === null) {
      // The client stopped: answers still awaited settle with their acknowledgement.
      for (const [id, answer] of this.answers) {
        this.answers.delete(id);
        clearTimeout(answer.timer);
        answer.item.onReply(answer.ack);
      }
    }
    for (const item of failed) item.onFail(error, retry);
  }

  private settle(id: string, entry: Pending): void {
    this.pending.delete(id);
    if (--entry.batch.remaining === 0 && entry.batch.timer !== undefined) {
      clearTimeout(entry.batch.timer);
      entry.batch.timer = undefined;
    }
  }

  private outgoing(message: Message): Message | null {
    let m: Message | null = message;
    for (const ext of this.extensions) {
      if (m === null) break;
      if (ext.outgoing) m = ext.outgoing(m);
    }
    return m;
  }

  private incoming(message: Message): Message | null {
    let m: Message | null = message;
    for (const ext of this.extensions) {
      if (m === null) break;
      if (ext.incoming) m = ext.incoming(m);
    }
    return m;
  }
}

/** Bytes of `text` in UTF-8, without encoding it. */
function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 2; // a surrogate pair: 4 bytes for 2 UTF-16 units
      i++;
    } else n += 2;
  }
  return n;
}
