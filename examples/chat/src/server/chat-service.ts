/**
 * The chat on top of `@bayou/server`: the handshake names a session, subscriptions to
 * `/chat/<room>` make members (Bayou presence: `presence: true` on `/chat/*`, followed by
 * the page on `/presence/chat/<room>`), and three services do the rest — send (stamped
 * with the session's user and republished by the server), history, and private messages
 * delivered to the recipient's sessions only. Clients cannot publish on broadcast
 * channels at all.
 */
import {
  type AuthenticateHook,
  BayeuxReplyError,
  type BayouApp as Bayou,
  type BayouOptions,
  type ServerSession as Session,
} from '@bayou/server';
import {
  type ChatMessage,
  checkText,
  type HistoryReply,
  LIMITS,
  normalizeName,
  normalizeRoom,
  type PrivateMessage,
  ROOM_PREFIX,
  roomChannel,
  roomOf,
  SERVICE,
} from '../shared/chat-protocol.js';
import { ChatRooms, type ChatRoomsOptions } from './chat-rooms.js';

type Hooks = Required<Pick<BayouOptions, 'authenticate' | 'canSubscribe' | 'canPublish'>>;

/** The channel rule that makes the subscribers of every room its members. */
export const PRESENCE_RULE = { pattern: `${ROOM_PREFIX}*`, presence: true } as const;
const PRESENCE_PREFIX = `/presence${ROOM_PREFIX}`;

export class ChatService {
  readonly rooms: ChatRooms;
  /** The live sessions of each user name (a user may have several tabs open). */
  private readonly sessionsByUser = new Map<string, Set<Session>>();
  /** Makes message ids unique across restarts, so a page never mistakes a new message for one it has. */
  private readonly boot = Date.now().toString(36) + Math.random().toString(36).slice(2, 6);
  private seq = 0;
  private bayou: Bayou | null = null;

  constructor(options: ChatRoomsOptions = {}) {
    this.rooms = new ChatRooms(options);
  }

  /**
   * The Bayou hooks the chat needs; pass them to `createServer` or `app.register(bayou, …)`.
   * With `tokens`, the user is the verified token's `sub` (Bayou's `auth.tokens` checks
   * it) and a name the handshake claims is ignored.
   */
  hooks(options: { tokens?: boolean } = {}): Hooks {
    return {
      authenticate: options.tokens === true ? () => true : authenticate,
      canSubscribe: (session, channel) => {
        // A session without a valid user name (a token whose `sub` is not one) joins nothing.
        if (typeof session.data.user !== 'string') return false;
        if (channel === SERVICE.inbox) return true;
        // Following a room's members (and asking `/service/presence` for them) is open to
        // anyone who may be in rooms.
        if (channel.startsWith(PRESENCE_PREFIX)) return roomOf(channel.slice(9)) !== null;
        if (roomOf(channel) === null) return false;
        if (session.subscriptions.has(channel)) return true;
        return roomsOf(session) < LIMITS.roomsPerSession;
      },
      // Chat messages reach rooms only through SERVICE.send, which stamps the sender.
      canPublish: () => false,
    };
  }

  /** Wires the chat to a running Bayou: session and subscription events, the services. */
  attach(bayou: Bayou): void {
    this.bayou = bayou;
    bayou.on('session', (session) => this.sessionAdded(session));
    bayou.on('session:removed', (session) => this.sessionRemoved(session));
    bayou.service(SERVICE.send, (data, { session }) => this.send(session, data));
    bayou.service(SERVICE.history, (data) => this.history(data));
    bayou.service(SERVICE.private, (data, { session }) => this.sendPrivate(session, data));
  }

  // ---- services ----------------------------------------------------------------------

  private send(session: Session, data: unknown): { id: string } {
    const room = normalizeRoom(field(data, 'room'));
    if (room === null) throw new BayeuxReplyError('400::room_invalid');
    if (!session.subscriptions.has(roomChannel(room))) throw new BayeuxReplyError(`403:${room}:not_in_room`);
    const text = checkText(field(data, 'text'));
    if (!text.ok) throw new BayeuxReplyError(`400:${LIMITS.textLength}:${text.reason}`);
    const message: ChatMessage = {
      type: 'message',
      id: this.nextId(),
      room,
      user: userOf(session),
      text: text.text,
      ts: Date.now(),
    };
    this.rooms.record(message);
    this.bayou?.publish(roomChannel(room), message);
    return { id: message.id };
  }

  private history(data: unknown): HistoryReply {
    const room = normalizeRoom(field(data, 'room'));
    if (room === null) throw new BayeuxReplyError('400::room_invalid');
    return { room, messages: this.rooms.history(room) };
  }

  private sendPrivate(session: Session, data: unknown): { id: string } {
    const to = normalizeName(field(data, 'to'));
    if (to === null) throw new BayeuxReplyError('400::name_invalid');
    const targets = this.sessionsByUser.get(to);
    if (targets === undefined || targets.size === 0) throw new BayeuxReplyError(`404:${to}:user_offline`);
    const text = checkText(field(data, 'text'));
    if (!text.ok) throw new BayeuxReplyError(`400:${LIMITS.textLength}:${text.reason}`);
    const from = userOf(session);
    const message: PrivateMessage = {
      type: 'private',
      id: this.nextId(),
      from,
      to,
      text: text.text,
      ts: Date.now(),
    };
    // The sender's own sessions get a copy too, so every tab shows the conversation.
    const recipients = new Set([...targets, ...(this.sessionsByUser.get(from) ?? [])]);
    for (const s of recipients) this.bayou?.deliver(s, SERVICE.inbox, message);
    return { id: message.id };
  }

  // ---- membership --------------------------------------------------------------------

  private sessionAdded(session: Session): void {
    // With tokens the verified `sub` names the user; in the open demo, the name it claimed.
    const sub = session.auth?.sub;
    const user = typeof sub === 'string' ? normalizeName(sub) : null;
    if (user === null) return;
    session.data.user = user;
    let sessions = this.sessionsByUser.get(user);
    if (sessions === undefined) {
      sessions = new Set();
      this.sessionsByUser.set(user, sessions);
    }
    sessions.add(session);
  }

  private sessionRemoved(session: Session): void {
    if (typeof session.data.user !== 'string') return;
    const sessions = this.sessionsByUser.get(session.data.user);
    sessions?.delete(session);
    if (sessions?.size === 0) this.sessionsByUser.delete(session.data.user);
  }

  private nextId(): string {
    return `${this.boot}-${++this.seq}`;
  }
}

/**
 * A handshake must carry a valid name in `ext.chat.user`; it becomes `session.auth.sub`,
 * the user Bayou's presence reports for the session's rooms.
 */
const authenticate: AuthenticateHook = (message) => {
  const user = normalizeName(field(field(message.ext, 'chat'), 'user'));
  return user === null ? false : { sub: user };
};

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function userOf(session: Session): string {
  return String(session.data.user);
}

/** Rooms a session is in: its subscriptions to `/chat/<room>`. */
function roomsOf(session: Session): number {
  let n = 0;
  for (const name of session.subscriptions) if (roomOf(name) !== null) n++;
  return n;
}
