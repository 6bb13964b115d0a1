/**
 * What the chat page and the chat server agree on: channel names, the shapes on them and
 * the limits. The server enforces every limit; the page uses the same numbers only to stop
 * the user early.
 */

export const LIMITS = {
  /** Longest user name, in characters (code points) after trimming. */
  nameLength: 24,
  /** Longest chat or private message, in characters after trimming. */
  textLength: 500,
  /** Longest room name. */
  roomLength: 24,
  /** Messages a room keeps for people who join later. */
  history: 50,
  /** Rooms one session may be in at once. */
  roomsPerSession: 20,
} as const;

export const ROOM_PREFIX = '/chat/';
export const SERVICE = {
  send: '/service/chat/send',
  history: '/service/chat/history',
  private: '/service/chat/private',
  /** Where the server delivers private messages to one session; nothing is broadcast there. */
  inbox: '/service/chat/inbox',
} as const;

/** A chat message as the server publishes it on `/chat/<room>` (and keeps in history). */
export interface ChatMessage {
  type: 'message';
  /** Unique across server restarts. */
  id: string;
  room: string;
  /** Stamped by the server from the sender's session, never taken from the client. */
  user: string;
  text: string;
  /** Server time, ms since the epoch. */
  ts: number;
}

/** What `/chat/<room>` carries; its members are Bayou presence (`/presence/chat/<room>`). */
export type RoomEvent = ChatMessage;

/** Delivered on `SERVICE.inbox` to the recipient's sessions and the sender's. */
export interface PrivateMessage {
  type: 'private';
  id: string;
  from: string;
  to: string;
  text: string;
  ts: number;
}

export interface HistoryReply {
  room: string;
  messages: ChatMessage[];
}

// Control characters (C0, DEL, C1) and the bidi overrides that can make text lie about its order.
const CONTROL = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;
const CONTROL_GLOBAL = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;
const ROOM = /^[a-z0-9][a-z0-9_-]*$/;

const length = (s: string): number => [...s].length;

/** A valid user name (trimmed, inner whitespace collapsed), or `null`. */
export function normalizeName(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const name = value.trim().replace(/\s+/g, ' ');
  if (name === '' || length(name) > LIMITS.nameLength || CONTROL.test(name)) return null;
  return name;
}

/** Why `value` is no valid user name, in words for the person typing it; `null` when it is one. */
export function nameProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return 'a name is needed';
  const name = value.trim().replace(/\s+/g, ' ');
  if (CONTROL.test(name)) return 'no control or text-direction characters, please';
  if (length(name) > LIMITS.nameLength) return `at most ${LIMITS.nameLength} characters`;
  return null;
}

/** Why `value` is no valid room name, in words; `null` when it is one. */
export function roomProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return 'a room name is needed';
  if (value.trim().length > LIMITS.roomLength)
    return `room names have at most ${LIMITS.roomLength} characters`;
  return normalizeRoom(value) === null
    ? 'room names use a-z, 0-9, - and _ (starting with a letter or digit)'
    : null;
}

/** A valid room name (lowercase letters, digits, `-`, `_`), or `null`. */
export function normalizeRoom(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const room = value.trim().toLowerCase();
  if (room.length > LIMITS.roomLength || !ROOM.test(room)) return null;
  return room;
}

export type TextCheck = { ok: true; text: string } | { ok: false; reason: 'text_missing' | 'text_too_long' };

/** Trims a message and replaces control characters with spaces; rejects empty and too long ones. */
export function checkText(value: unknown): TextCheck {
  if (typeof value !== 'string') return { ok: false, reason: 'text_missing' };
  const text = value.replace(CONTROL_GLOBAL, ' ').trim();
  if (text === '') return { ok: false, reason: 'text_missing' };
  if (length(text) > LIMITS.textLength) return { ok: false, reason: 'text_too_long' };
  return { ok: true, text };
}

export function roomChannel(room: string): string {
  return ROOM_PREFIX + room;
}

/** The room of a `/chat/<room>` channel, or `null` for anything else (wildcards included). */
export function roomOf(channel: string): string | null {
  if (!channel.startsWith(ROOM_PREFIX)) return null;
  return normalizeRoom(channel.slice(ROOM_PREFIX.length)) === channel.slice(ROOM_PREFIX.length)
    ? channel.slice(ROOM_PREFIX.length)
    : null;
}
