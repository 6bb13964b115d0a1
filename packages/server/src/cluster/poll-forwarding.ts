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
import type { TransportKernel } from '../transports/transport-kernel.js';
import type { RequestInfo } from '../types.js';

const SHUTTING_DOWN = '{"error":"server shutting down: send the request again"}';
const ENGINE_AWAY = '{"error":"the engine is unavailable: send the request again"}';

/** Runs a batch on this node (the long-polling transport's `runPoll`). */
export type RunPoll = (poll: PollRequest) => void;

/** The sending side: relays batches to their owner node, and answers them at shutdown. */
export class PollForwarder {
  /** Batches relayed to their owner node and not yet answered. */
  private readonly relays = new Set<HttpReply>();

  constructor(
    private readonly kernel: TransportKernel,
    private readonly run: RunPoll,
  ) {}

  /** The node owning the session the batch names, when that is not this one. */
  ownerOf(poll: PollRequest): string | null {
    return this.kernel.cluster.ownedElsewhere((poll.messages[0] as { clientId?: unknown } | null)?.clientId);
  }

  /** Hands the batch to `owner`; a dead owner's sessions are unknown here. */
  forward(owner: string, poll: PollRequest): void {
    const reply = poll.reply;
    this.relays.add(reply);
    void this.relay(owner, poll).finally(() => this.relays.delete(reply));
  }

  /**
   * Shutdown: answers the batches relayed to other nodes with 503 at once (their clients
   * send them again elsewhere, the ack extension resending what was in flight), so no
   * connect held on another node keeps this one from closing.
   */
  drain(): void {
    for (const relay of this.relays) if (!relay.sent) relay.send(503, SHUTTING_DOWN);
    this.relays.clear();
  }

  private async relay(owner: string, poll: PollRequest): Promise<void> {
    const { kernel, run } = this;
    const reply = poll.reply;
    const local = (): void => {
      if (!reply.sent) run(poll);
    };
    try {
      if (!(await kernel.cluster.isAlive(owner))) return local();
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(poll.info.headers)) {
        if (typeof value === 'string') headers[name] = value;
      }
      const answer = await kernel.cluster.forward(owner, {
        body: poll.text,
        url: poll.info.url,
        headers,
        // The client's IP as this node saw it (trustProxy applied), for the owner's limits.
        remoteAddress: poll.info.ip ?? poll.info.remoteAddress,
        browserId: poll.browserId,
      });
      // Unless shutdown answered first: then the owner's ack extension resends what this carried.
      if (!reply.sent) reply.send(answer.status, answer.body);
    } catch (err) {
      if (!kernel.cluster.engineReady()) {
        // Redis is away, not (as far as anyone knows) the owner: answering here would tell the
        // client its living session is unknown (402), and a subscribe in the batch would fail
        // on a fresh session too. 503: the client sends the batch again on the same session.
        kernel.log.warn(
          { err, owner },
          'forwarding a long-poll failed while the engine is away; answering 503',
        );
        if (!reply.sent) reply.send(503, ENGINE_AWAY);
        return;
      }
      kernel.log.warn({ err, owner }, 'forwarding a long-poll failed; answering here');
      local();
    }
  }
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
): Promise<ForwardResponse> {
  return new Promise((resolve) => {
    const decoded = decodeBatch(request.body);
    if (!decoded.ok || decoded.messages.length > maxBatchMessages) {
      resolve({ status: 400, body: JSON.stringify({ error: 'invalid batch' }) });
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
    });
  });
}
