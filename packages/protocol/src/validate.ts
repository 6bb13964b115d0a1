/**
 * Decoding and validation of incoming batches. A batch is a JSON array of messages
 * (a single object is accepted too, as CometD does); each message is checked on its own,
 * so one bad message gets its own error reply and does not spoil the rest.
 */
import { type ChannelInfo, parseChannel } from './channel.js';
import { type BayeuxErrorName, formatError } from './errors.js';
import type { Message } from './message.js';

export type DecodeResult = { ok: true; messages: unknown[] } | { ok: false; reason: string };

/**
 * Deepest nesting of arrays and objects `decodeBatch` accepts by default. A batch is
 * depth 1, a message 2; 64 leaves application data 62 levels, far more than any real
 * payload, while a hostile body nested thousands deep is refused before `JSON.parse`
 * (whose recursion, and every recursive walk after it, would overflow the stack).
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 123; // {
const OPEN_BRACKET = 91; // [
const CLOSE_BRACE = 125; // }
const CLOSE_BRACKET = 93; // ]
const QUOTE = 34; // "
const BACKSLASH = 92; // \

/**
 * One linear pass over the text: whether brackets nest deeper than `limit` outside string
 * literals. Strings are skipped with `indexOf` (a quote preceded by an even number of
 * backslashes ends one), so the cost is a fraction of `JSON.parse`'s. Malformed text gets
 * some answer and is refused by `JSON.parse` anyway; only well-formed text needs an exact one.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return false;
        let k = end - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((end - 1 - k) % 2 === 0) break;
      }
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * Parses a transport payload; a failure here is answered at transport level (HTTP 400, WS
 * close). Nesting deeper than `maxDepth` is refused without parsing.
 */
export function decodeBatch(text: string, maxDepth: number = MAX_JSON_DEPTH): DecodeResult {
  // A text shorter than the limit cannot nest deeper than it: short batches skip the scan.
  if (text.length > maxDepth && jsonDepthExceeds(text, maxDepth)) {
    return { ok: false, reason: `JSON nested deeper than ${maxDepth} levels` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `malformed JSON: ${(err as Error).message}` };
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return { ok: false, reason: 'empty batch: expected a JSON array of messages' };
    return { ok: true, messages: value };
  }
  if (value !== null && typeof value === 'object') return { ok: true, messages: [value] };
  return { ok: false, reason: 'expected a JSON array of Bayeux messages' };
}

export type ValidationResult =
  | { ok: true; message: Message; channel: ChannelInfo }
  | { ok: false; error: string; name: BayeuxErrorName; channel?: string; id?: string };

function hasProtoKey(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object' || depth > 64) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (hasProtoKey(item, depth + 1)) return true;
    return false;
  }
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return true;
    if (hasProtoKey((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

function fail(name: BayeuxErrorName, args: string[], m?: Record<string, unknown>): ValidationResult {
  const result: ValidationResult = { ok: false, error: formatError(name, args), name };
  if (m && typeof m.channel === 'string') result.channel = m.channel;
  if (m && (typeof m.id === 'string' || typeof m.id === 'number')) result.id = String(m.id);
  return result;
}

/**
 * Validates one incoming message. `scanForProto` asks for the deep `__proto__` scan; a
 * transport sets it only when the raw text contains `__proto__`, so the common case
 * costs nothing.
 */
export function validateMessage(value: unknown, scanForProto = true): ValidationResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return fail('messageInvalid', ['message']);
  }
  const m = value as Record<string, unknown>;
  if (m.channel === undefined || m.channel === null || m.channel === '') return fail('channelMissing', [], m);
  if (typeof m.channel !== 'string') return fail('messageInvalid', ['channel'], m);
  const channel = parseChannel(m.channel);
  if (channel === null) return fail('channelInvalid', [m.channel], m);
  if (m.id !== undefined && typeof m.id !== 'string' && typeof m.id !== 'number') {
    return fail('messageInvalid', ['id'], m);
  }
  if (m.clientId !== undefined && typeof m.clientId !== 'string')
    return fail('messageInvalid', ['clientId'], m);
  if (m.ext !== undefined && (m.ext === null || typeof m.ext !== 'object' || Array.isArray(m.ext))) {
    return fail('messageInvalid', ['ext'], m);
  }
  if (scanForProto && hasProtoKey(m, 0)) return fail('forbiddenKey', ['__proto__'], m);
  if (typeof m.id === 'number') m.id = String(m.id);
  return { ok: true, message: m as Message, channel };
}
