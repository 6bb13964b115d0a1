/**
 * Decoding and validation of incoming batches. A batch is a JSON array of messages
 * (a single object is accepted too, as CometD does); each message is checked on its own,
 * so one bad message gets its own error reply and does not spoil the rest.
 */
import { type ChannelInfo, parseChannel } from './channel.js';
import { type BayeuxErrorName, formatError } from './errors.js';
import type { Message } from './message.js';

export type DecodeResult = { ok: true; messages: unknown[] } | { ok: false; reason: string };

/** Parses a transport payload; a failure here is answered at transport level (HTTP 400, WS close). */
export function decodeBatch(text: string): DecodeResult {
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
