/**
 * Long-polling across a cluster without sticky sessions. A batch naming a session of
 * another live node is forwarded to that node through the engine's session directory and
 * its answer relayed (`PollForwarder`); the owner runs it as if its request had arrived
 * there (`runForwarded`), answering through a `ForwardedReply`.
 */
import { decodeBatch } from '@bayou/protocol';
import type { ForwardRequest, ForwardResponse } from '../kernel/node-link.js';
import { LONG_POLLING_CARRIER } from '../transports/carrier-kinds.js';
import type { HttpReply, ResponseStream } from '../transports/http-reply.js';
import type { PollRequest } from '../transports/poll-request.js';
import { arrivalStamp, asideConnectId } from '../transports/resent-connects.js';
import type { TransportKernel } from '../transports/transport-kernel.js';
import type { RequestInfo } from '../types.js';

/**
 * The answer of a node to a batch forwarded for a session it handed over at its drain: the
 * forwarding node then claims the session, or finds its adopter (`SessionHandovers`).
 */
export const MOVED = 421;
/** Hops a batch may take after its owner said `MOVED` (a race between two adopters ends quickly). */
const MAX_HOPS = 3;
const ENGINE_LOST = Symbol('engine lost');
/** How long a shutdown waits for the connects it relays to be answered by their nodes. */
const RELEASE_WAIT_MS = 1000;

/** A batch relayed to another node: where it is now, and its end. */
interface Relay {
  target: string;
  readonly clientId: unknown;
  done: Promise<void>;
}
const SHUTTING_DOWN = '{"error":"server shutting down: send the request again"}';
const ENGINE_AWAY = '{"error":"the engine is unavailable: send the request again"}';

/** Runs a batch on this node (the long-polling transport's `runPoll`). */
export type RunPoll = (poll: PollRequest) => void;

/** The sending side: relays batches to their owner node, and answers them at shutdown. */
export class PollForwarder {
  /** Batches relayed to their owner node and not yet answered: where to, and when done. */
  private readonly relays = new Map<HttpReply, Relay>();

  constructor(
    private readonly kernel: TransportKernel,
    private readonly run: RunPoll,
  ) {}

  /** The node owning the session the batch names, when that is not this one. */
  ownerOf(poll: PollRequest): string | null {
    return this.kernel.cluster.ownedElsewhere(clientIdOf(poll));
  }

  /** Hands the batch to `owner`; a dead owner's sessions are unknown here. */
  forward(owner: string, poll: PollRequest): void {
    const reply = poll.reply;
    const relay: Relay = { target: owner, clientId: clientIdOf(poll), done: Promise.resolve() };
    this.relays.set(reply, relay);
    relay.done = this.relay(relay, poll).finally(() => this.relays.delete(reply));
  }

  /**
   * Shutdown: asks each node holding a connect relayed from here to answer it now, and relays
   * those answers (up to `RELEASE_WAIT_MS`): an answer that came after the client was told
   * 503 would be lost to a client without the ack extension (Faye). What is left is answered
   * 503 (the client sends it again elsewhere), so no connect held on another node keeps this
   * one from closing.
   */
  async drain(): Promise<void> {
    const waiting = [...this.relays.entries()].filter(([reply]) => !reply.sent);
    if (waiting.length > 0) {
      const released = waiting.map(([, relay]) =>
        typeof relay.clientId === 'string'
          ? this.kernel.cluster.release(relay.target, relay.clientId).then(
              () => relay.done,
              () => undefined,
            )
          : undefined,
      );
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, RELEASE_WAIT_MS);
      });
      await Promise.race([Promise.all(released), bound]).finally(() => clearTimeout(timer));
    }
    for (const reply of this.relays.keys()) if (!reply.sent) reply.send(503, SHUTTING_DOWN);
    this.relays.clear();
  }

  private send(target: string, poll: PollRequest): Promise<ForwardResponse> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(poll.info.headers)) {
      if (typeof value === 'string') headers[name] = value;
    }
    return this.kernel.cluster.forward(target, {
      body: poll.text,
      url: poll.info.url,
      headers,
      // The client's IP as this node saw it (trustProxy applied), for the owner's limits.
      remoteAddress: poll.info.ip ?? poll.info.remoteAddress,
      browserId: poll.browserId,
      arrivedAt: poll.arrivedAt,
    });
  }

  private async relay(relay: Relay, poll: PollRequest): Promise<void> {
    const { kernel, run } = this;
    const reply = poll.reply;
    const local = (): void => {
      if (!reply.sent) run(poll);
    };
    for (let hop = 0; hop <= MAX_HOPS; hop++) {
      const answer = await this.attempt(relay.target, poll);
      if (answer === ENGINE_LOST) return;
      if (answer !== null && answer.status !== MOVED) {
        // Answered 503 at shutdown meanwhile, or its client gave up: what it carries goes back
        // (an ack extension's session resends its unacknowledged batches itself).
        if (reply.sent || reply.raw?.destroyed === true) this.giveBack(relay, poll, answer);
        else reply.send(answer.status, answer.body);
        return;
      }
      // Its node is gone, failed, or handed the session over: adopted here, or its adopter's.
      const located = await Promise.resolve(
        kernel.cluster.locate(clientIdOf(poll), LONG_POLLING_CARRIER),
      ).catch(() => 'here' as const);
      if (located === 'here') return local();
      relay.target = located.node;
    }
    local();
  }

  /**
   * The client of a forwarded batch went away before its answer came (it gave up waiting: Faye
   * abandons a connect told `timeout: 0` after 1.2 × its `retry`): the deliveries the answer
   * carries go back to the session's node, ahead of its queue (`AdminOps` op `requeue`), rather
   * than into a closed response — a client without acknowledgements would never get them again.
   */
  private giveBack(relay: Relay, poll: PollRequest, answer: ForwardResponse): void {
    const clientId = relay.clientId;
    // An EventSource connect is sent again with its id, and its node keeps what its answer
    // carried for that (`resent-connects.ts`): given back as well, it would come twice.
    if (answer.status !== 200 || typeof clientId !== 'string' || asideConnectId(poll.messages) !== null)
      return;
    const deliveries = deliveriesIn(answer.body);
    if (deliveries.length === 0) return;
    this.kernel.cluster
      .requeue(relay.target, clientId, deliveries)
      .catch((err: unknown) =>
        this.kernel.log.warn({ err, clientId }, 'deliveries whose client went away could not be put back'),
      );
  }

  /**
   * The answer of `target` to the batch; `null` when it is not alive or failed to answer
   * (the caller looks for the session elsewhere), `ENGINE_LOST` when Redis went away
   * meanwhile (the batch was answered 503).
   */
  private async attempt(
    target: string,
    poll: PollRequest,
  ): Promise<ForwardResponse | null | typeof ENGINE_LOST> {
    const { kernel } = this;
    try {
      if (!(await kernel.cluster.isAlive(target))) return null;
      return await this.send(target, poll);
    } catch (err) {
      if (!kernel.cluster.engineReady()) {
        // Redis is away, not (as far as anyone knows) the owner: answering here would tell the
        // client its living session is unknown (402), and a subscribe in the batch would fail
        // on a fresh session too. 503: the client sends the batch again on the same session.
        kernel.log.warn(
          { err, owner: target },
          'forwarding a long-poll failed while the engine is away; answering 503',
        );
        if (!poll.reply.sent) poll.reply.send(503, ENGINE_AWAY);
        return ENGINE_LOST;
      }
      kernel.log.warn({ err, owner: target }, 'forwarding a long-poll failed; answering here');
      return null;
    }
  }
}

/** The deliveries an answer's body carries (its messages that reply to none: no `successful`), serialized. */
function deliveriesIn(body: string): string[] {
  let messages: unknown;
  try {
    messages = JSON.parse(body);
  } catch {
    return [];
  }
  if (!Array.isArray(messages)) return [];
  const out: string[] = [];
  for (const m of messages)
    if (typeof m === 'object' && m !== null && !('successful' in m)) out.push(JSON.stringify(m));
  return out;
}

/** The clientId the first message of a batch names. */
function clientIdOf(poll: PollRequest): unknown {
  return (poll.messages[0] as { clientId?: unknown } | null)?.clientId;
}

/** The answer to a forwarded batch, relayed to the node that received it. */
export class ForwardedReply implements HttpReply {
  sent = false;
  readonly raw = null;
  constructor(private readonly resolve: (response: ForwardResponse) => void) {}
  header(): void {}
  send(status: number, body: string): void {
    this.sent = true;
    this.resolve({ status, body });
  }
  /** A forwarded batch is answered once: it cannot hold a stream. */
  openStream(): ResponseStream | null {
    return null;
  }
}

/** The receiving side: runs a batch another node forwarded, as if its request had arrived here. */
export function runForwarded(
  request: ForwardRequest,
  maxBatchMessages: number,
  run: RunPoll,
  handedOver: (clientId: unknown) => boolean = () => false,
): Promise<ForwardResponse> {
  return new Promise((resolve) => {
    const decoded = decodeBatch(request.body);
    if (!decoded.ok || decoded.messages.length > maxBatchMessages) {
      resolve({ status: 400, body: JSON.stringify({ error: 'invalid batch' }) });
      return;
    }
    if (handedOver((decoded.messages[0] as { clientId?: unknown } | null)?.clientId)) {
      resolve({ status: MOVED, body: '' });
      return;
    }
    const info: RequestInfo = {
      transport: LONG_POLLING_CARRIER.name,
      carrier: LONG_POLLING_CARRIER,
      headers: request.headers,
      url: request.url,
      remoteAddress: request.remoteAddress,
      ip: request.remoteAddress,
      browserId: request.browserId,
    };
    run({
      text: request.body,
      messages: decoded.messages,
      info,
      browserId: request.browserId,
      reply: new ForwardedReply(resolve),
      arrivedAt: typeof request.arrivedAt === 'number' ? request.arrivedAt : arrivalStamp(),
    });
  });
}
