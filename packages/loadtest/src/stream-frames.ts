/**
 * What the lean and the browser-like stream drivers share: the two connection types, the
 * request that opens a stream, a frame's parsing and its deliveries.
 */
import { EXT_RECORD_KIND, isMetaChannel, META_CONNECT, type Message } from '@bayou/protocol';
import { type DriverOptions, deliverPayload } from './driver.js';

/** Bayou's HTTP streaming, or Faye's EventSource transport (which Bayou also speaks). */
export type StreamKind = 'streaming' | 'eventsource';

/** The path of Bayou's stream, after the endpoint's (`POST /bayeux/stream`). */
export const STREAM_PATH = '/stream';

/** A stream's first `/meta/connect` (streaming: the request body). */
export function streamConnect(clientId: string): string {
  return `[{"channel":"${META_CONNECT}","clientId":"${clientId}","connectionType":"streaming"}]`;
}

/** The endpoint's path without a trailing slash, so `<path>/stream` and `<path>/<id>` join. */
export function basePath(url: URL): string {
  return url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
}

/**
 * Pre-formats the request that opens a stream: `POST <path>/stream` with the connect as its
 * body, or an EventSource's `GET <path>/<clientId>`.
 */
export function streamEndpoint(
  url: URL,
  kind: StreamKind,
  headers: Readonly<Record<string, string>> = {},
): { request(clientId: string, cookie: string | undefined): string } {
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const path = basePath(url);
  if (kind === 'streaming') {
    const head = `POST ${path}${STREAM_PATH}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n${extra}`;
    return {
      request(clientId, cookie) {
        const body = streamConnect(clientId);
        const c = cookie ? `Cookie: ${cookie}\r\n` : '';
        return `${head}${c}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      },
    };
  }
  const accept = `Host: ${url.host}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n${extra}`;
  return {
    request(clientId, cookie) {
      const c = cookie ? `Cookie: ${cookie}\r\n` : '';
      return `GET ${path}/${clientId}${url.search} HTTP/1.1\r\n${accept}${c}\r\n`;
    },
  };
}

/**
 * A frame's messages, or undefined when it is not JSON. A numbered frame may carry the ack
 * extension's marker after the array; the drivers do not ask for numbered frames, but a
 * frame with one still parses.
 */
export function parseFrame(text: string): Message[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const end = text.lastIndexOf(']');
    if (end <= 0 || end === text.length - 1) return undefined;
    return parseFrame(text.slice(0, end + 1));
  }
  if (Array.isArray(parsed)) return parsed as Message[];
  return typeof parsed === 'object' && parsed !== null ? [parsed as Message] : undefined;
}

/**
 * Hands a frame's (or a reply's) deliveries to the sink (or the record sink, for client
 * `index`) and returns the `/meta/connect` reply it held, if any.
 */
export function deliverMessages(
  options: DriverOptions,
  index: number,
  messages: readonly Message[],
): Message | undefined {
  let connect: Message | undefined;
  let carried = false;
  const records = options.records;
  for (const m of messages) {
    if (m.channel === META_CONNECT) connect = m;
    else if (m.data !== undefined && !isMetaChannel(m.channel)) {
      if (records) records.onRecord(index, m.channel, m.data, m.ext?.[EXT_RECORD_KIND]);
      else deliverPayload(options.sink, m.data);
      carried = true;
    }
  }
  if (carried) options.onFrame?.();
  return connect;
}
