/**
 * The chat on top of `@bayou/server`: the handshake names a session, subscriptions to
 * `/chat/<room>` make members, and three services do the rest — send (stamped with the
 * session's user and republished by the server), history, and private messages delivered
 * to the recipient's sessions only. Clients cannot publish on broadcast channels at all.
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
  type MembersUpdate,
  normalizeName,
  normalizeRoom,
  type PrivateMessage,
  roomChannel,
  roomOf,
  SERVICE,
} from '../shared/chat-protocol.js';
import { ChatRooms, type ChatRoomsOptions } from './chat-rooms.js';

type Hooks = Required<Pick<BayouOptions, 'authenticate' | 'canSubscribe' | 'canPublish'>>;

export class ChatService {
  readonly rooms: ChatRooms;
  /** The rooms each live session is in. */
  private readonly sessionRooms = new Map<Session, Set<string>>();
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
        const rooms = this.sessionRooms.get(session);
        // A session without a valid user name (a token whose `sub` is not one) joins nothing.
        if (rooms === undefined) return false;
        if (channel === SERVICE.inbox) return true;
        if (roomOf(channel) === null) return false;
        return rooms.size < LIMITS.roomsPerSession;
      },
      // Chat messages reach rooms only through SERVICE.send, which stamps the sender.
      canPublish: () => false,
    };
  }

  /** Wires the chat to a running Bayou: session and subscription events, the services. */
  attach(bayou: Bayou): void {
    this.bayou = bayou;
    bayou.on('session', (session) => this.sessionAdded(session));
    bayou.on('session:removed', (session, reason) => this.sessionRemoved(session, reason === 'shutdown'));
    bayou.on('subscribe', (session, channel) => this.subscribed(session, channel));
    bayou.on('unsubscribe', (session, channel) => this.unsubscribed(session, channel));
    bayou.service(SERVICE.send, (data, { session }) => this.send(session, data));
    bayou.service(SERVICE.history, (data) => this.history(data));
    bayou.service(SERVICE.private, (data, { session }) => this.sendPrivate(session, data));
  }

  // ---- services ----------------------------------------------------------------------

  private send(session: Session, data: unknown): { id: string } {
    const room = normalizeRoom(field(data, 'room'));
    if (room === null) throw new BayeuxReplyError('400::room_invalid');
    if (!this.sessionRooms.get(session)?.has(room)) throw new BayeuxReplyError(`403:${room}:not_in_room`);
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
    return { room, messages: this.rooms.history(room), members: this.rooms.members(room) };
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
    const user =
      typeof sub === 'string'
        ? normalizeName(sub)
        : typeof session.auth?.user === 'string'
          ? session.auth.user
          : null;
    if (user === null) return;
    session.data.user = user;
    this.sessionRooms.set(session, new Set());
    let sessions = this.sessionsByUser.get(user);
    if (sessions === undefined) {
      sessions = new Set();
      this.sessionsByUser.set(user, sessions);
    }
    sessions.add(session);
  }

  private sessionRemoved(session: Session, shutdown: boolean): void {
    const rooms = this.sessionRooms.get(session);
    if (rooms === undefined) return;
    this.sessionRooms.delete(session);
    const user = userOf(session);
    const sessions = this.sessionsByUser.get(user);
    sessions?.delete(session);
    if (sessions?.size === 0) this.sessionsByUser.delete(user);
    for (const room of rooms) {
      if (this.rooms.leave(room, user) && !shutdown) this.publishMembers(room, { left: user });
    }
  }

  private subscribed(session: Session, channel: string): void {
    const room = roomOf(channel);
    const rooms = this.sessionRooms.get(session);
    if (room === null || rooms === undefined || rooms.has(room)) return;
    rooms.add(room);
    const user = userOf(session);
    // Published even when the user was there already (another tab): the new subscriber needs the list.
    this.publishMembers(room, this.rooms.join(room, user) ? { joined: user } : {});
  }

  private unsubscribed(session: Session, channel: string): void {
    const room = roomOf(channel);
    const rooms = this.sessionRooms.get(session);
    if (room === null || rooms === undefined || !rooms.delete(room)) return;
    const user = userOf(session);
    if (this.rooms.leave(room, user)) this.publishMembers(room, { left: user });
  }

  private publishMembers(room: string, change: Pick<MembersUpdate, 'joined' | 'left'>): void {
    const update: MembersUpdate = { type: 'members', room, members: this.rooms.members(room), ...change };
    this.bayou?.publish(roomChannel(room), update);
  }

  private nextId(): string {
    return `${this.boot}-${++this.seq}`;
  }
}

/** A handshake must carry a valid name in `ext.chat.user`; it becomes `session.auth.user`. */
const authenticate: AuthenticateHook = (message) => {
  const user = normalizeName(field(field(message.ext, 'chat'), 'user'));
  return user === null ? false : { user };
};

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function userOf(session: Session): string {
  return String(session.data.user);
}
