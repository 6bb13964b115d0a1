/**
 * A POST's batch as the HTTP transports handle it: the request after its body was read
 * (`HttpPost`, whichever way it came), then decoded, checked and given its browser cookie
 * (`PollRequest`). A batch forwarded by another node is turned into a `PollRequest` too
 * (`cluster/poll-forwarding.ts`), so a transport runs all three alike.
 */
import type { IncomingMessage } from 'node:http';
import { BROWSER_COOKIE, decodeBatch } from '@bayou/protocol';
import type { RandomIds } from '../random-ids.js';
import type { CarrierKind, RequestInfo } from '../types.js';
import type { HttpReply } from './http-reply.js';
import { readCookie } from './http-request.js';
import { requestInfo } from './request-info.js';
import { arrivalStamp } from './resent-connects.js';

/** A POST to the endpoint with its body in hand. */
export interface HttpPost {
  /** The body's text (a form's `message` field already taken out). */
  readonly text: string;
  readonly raw: IncomingMessage;
  /** The URL path after the endpoint's path: `''`, `'/connect'`, `'/stream'`… */
  readonly subpath: string;
  /** `request.ip` as Fastify says it (`trustProxy` applied). */
  readonly ip: string | undefined;
  /** `request.protocol === 'https'` as Fastify says it. */
  readonly secure: boolean;
  readonly reply: HttpReply;
}

/** A batch ready to run: what `handlePoll` once took as nine parameters. */
export interface PollRequest {
  /** The batch's JSON text (forwarded as is to the session's owner node). */
  readonly text: string;
  readonly messages: unknown[];
  readonly info: RequestInfo;
  /** The `BAYEUX_BROWSER` cookie the request carried or was given; `null` when unknown. */
  readonly browserId: string | null;
  readonly reply: HttpReply;
  /**
   * When it reached the node that received it (`arrivalStamp`; a forwarded batch keeps its
   * first node's): which of two attempts of one connect came last (`resent-connects.ts`).
   */
  readonly arrivedAt: number;
}

/**
 * Decodes a POST's batch, refuses a bad or oversized one (400), and reads or sets the
 * browser cookie. `null` when the request was answered.
 */
export function pollRequest(
  kind: CarrierKind,
  post: HttpPost,
  maxBatchMessages: number,
  browserIds: RandomIds,
): PollRequest | null {
  const { reply, raw } = post;
  const decoded = decodeBatch(post.text);
  if (!decoded.ok) {
    reply.send(400, JSON.stringify({ error: decoded.reason }));
    return null;
  }
  if (decoded.messages.length > maxBatchMessages) {
    const error = `too many messages in one request (max ${maxBatchMessages})`;
    reply.send(400, JSON.stringify({ error }));
    return null;
  }
  let browserId = readCookie(raw.headers.cookie, BROWSER_COOKIE);
  if (browserId === null) {
    browserId = browserIds.next();
    reply.header(
      'set-cookie',
      `${BROWSER_COOKIE}=${browserId}; Path=/; HttpOnly; SameSite=Lax${post.secure ? '; Secure' : ''}`,
    );
  }
  const info = requestInfo(kind, raw, post.ip, browserId, post.secure);
  return { text: post.text, messages: decoded.messages, info, browserId, reply, arrivedAt: arrivalStamp() };
}
