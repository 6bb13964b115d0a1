/**
 * The page's link to the chat server, over one `BayouClient`: the name goes in every
 * handshake (so a re-handshake after a server restart is named again), rooms are
 * subscriptions the client restores by itself, each room's member list is
 * `client.presence(room)` (Bayou presence), and switching transports swaps the client for
 * a new one with the same rooms.
 */
import {
  BayouClient,
  type ConnectionState,
  longPolling,
  type PresenceEvent,
  type Subscription,
  websocket,
} from '@bayou/client';
import {
  type HistoryReply,
  type PrivateMessage,
  type RoomEvent,
  roomChannel,
  SERVICE,
} from '../shared/chat-protocol.js';

export interface ChatEvents {
  roomEvent(room: string, event: RoomEvent): void;
  /** The room's member names (each user once, however many tabs), sorted. */
  members(room: string, users: string[]): void;
  /** A user came into the room (their first session) or left it (their last). */
  memberChange(room: string, user: string, action: 'joined' | 'left'): void;
  history(reply: HistoryReply): void;
  privateMessage(message: PrivateMessage): void;
  state(state: ConnectionState): void;
  transport(name: string | null): void;
  /** An operational failure to show (a refused subscription, a lost history request). */
  problem(text: string): void;
  /**
   * The server advised `multiple-clients` (another tab of this browser long-polls it too,
   * and browsers allow only a few connections per server: connects are spaced out) — or
   * stopped advising it (`false`).
   */
  slowed(slowed: boolean): void;
}

export class ChatConnection {
  private client: BayouClient;
  private readonly rooms = new Map<string, Subscription>();
  /** Per room, what stops following its members. */
  private readonly following = new Map<string, () => void>();

  constructor(
    readonly user: string,
    private longPollingOnly: boolean,
    private readonly events: ChatEvents,
  ) {
    this.client = this.open();
  }

  get state(): ConnectionState {
    return this.client.state;
  }

  get transport(): string | null {
    return this.client.transport;
  }

  get forcedLongPolling(): boolean {
    return this.longPollingOnly;
  }

  /** Connects; rejects (with a `BayouError`) when the server refuses the name. */
  async start(): Promise<void> {
    this.subscribeAll();
    await this.client.connect();
  }

  /** Leaves the server (used when the first connect failed). */
  async stop(): Promise<void> {
    await this.client.disconnect().catch(() => undefined);
  }

  /** Subscribes to a room, then loads its history and member list. */
  async join(room: string): Promise<void> {
    if (this.rooms.has(room)) return;
    const sub = this.subscribeRoom(room);
    await sub.ready;
    await this.loadHistory(room);
  }

  leave(room: string): void {
    this.rooms.get(room)?.unsubscribe();
    this.rooms.delete(room);
    this.following.get(room)?.();
    this.following.delete(room);
  }

  send(room: string, text: string): Promise<unknown> {
    return this.client.request(SERVICE.send, { room, text });
  }

  sendPrivate(to: string, text: string): Promise<unknown> {
    return this.client.request(SERVICE.private, { to, text });
  }

  /** Moves to a new client on the chosen transports, keeping the rooms. */
  async switchTransports(longPollingOnly: boolean): Promise<void> {
    if (longPollingOnly === this.longPollingOnly) return;
    this.longPollingOnly = longPollingOnly;
    const old = this.client;
    for (const stop of this.following.values()) stop();
    this.following.clear();
    this.client = this.open();
    await old.disconnect().catch(() => undefined);
    this.subscribeAll();
    this.events.state(this.client.state);
    await this.client.connect();
    await this.reloadHistories();
  }

  private open(): BayouClient {
    const client = new BayouClient(new URL('/bayeux', location.href).href, {
      transports: this.longPollingOnly ? [longPolling] : [websocket, longPolling],
      // Every handshake (also after a restart or an expired token) asks for a fresh token.
      handshake: async () => {
        const token = await fetchToken(this.user);
        return token === null
          ? { chat: { user: this.user } }
          : { chat: { user: this.user }, auth: { token } };
      },
    });
    // Events of a client that was swapped out are ignored.
    client.on('state', (state, previous) => {
      if (client !== this.client) return;
      this.events.state(state);
      if (state === 'connected' && previous === 'reconnecting') void this.reloadHistories();
    });
    client.on('transport', (name) => {
      if (client === this.client) this.events.transport(name);
    });
    client.on('error', (error) => {
      // A failed connection attempt: the state pill says reconnecting, and a first connect
      // that never succeeds rejects with the reason (shown by the join form).
      if (client === this.client && error.code !== 'BAYOU_ERR_UNREACHABLE')
        this.events.problem(error.message);
    });
    // Only connect and handshake replies carry advice; each says whether it is spaced out.
    client.use({
      incoming: (message) => {
        if (message.advice && client === this.client)
          this.events.slowed(message.advice['multiple-clients'] === true);
        return message;
      },
    });
    return client;
  }

  private subscribeAll(): void {
    this.client.subscribe(SERVICE.inbox, (m) => this.events.privateMessage(m.data as PrivateMessage));
    const rooms = [...this.rooms.keys()];
    this.rooms.clear();
    for (const stop of this.following.values()) stop();
    this.following.clear();
    for (const room of rooms) this.subscribeRoom(room);
  }

  private subscribeRoom(room: string): Subscription {
    const sub = this.client.subscribe(roomChannel(room), (m) =>
      this.events.roomEvent(room, m.data as RoomEvent),
    );
    this.rooms.set(room, sub);
    this.followMembers(room);
    return sub;
  }

  /** The room's member list from Bayou presence; a user with several tabs counts once. */
  private followMembers(room: string): void {
    if (this.following.has(room)) return;
    const presence = this.client.presence(roomChannel(room));
    const names = (): string[] => {
      const users = presence.getSnapshot().members.map((m) => m.user ?? '?');
      return [...new Set(users)].sort((a, b) => a.localeCompare(b));
    };
    let shown: string[] = [];
    const offList = presence.subscribe(() => {
      shown = names();
      this.events.members(room, shown);
    });
    const offChange = presence.onChange((e: PresenceEvent) => {
      const user = e.member.user ?? '?';
      // Before the store applied it: `shown` is the list as it was.
      const had = shown.includes(user);
      queueMicrotask(() => {
        const has = names().includes(user);
        if (e.action === 'join' && !had && has) this.events.memberChange(room, user, 'joined');
        if (e.action === 'leave' && had && !has) this.events.memberChange(room, user, 'left');
      });
    });
    this.following.set(room, () => {
      offChange();
      offList();
    });
  }

  private async loadHistory(room: string): Promise<void> {
    const reply = await this.client.request<HistoryReply | null>(SERVICE.history, { room });
    if (reply?.room === room) this.events.history(reply);
  }

  /** After a reconnect: fill in what was missed (the page drops what it already has). */
  private async reloadHistories(): Promise<void> {
    for (const room of this.rooms.keys()) {
      await this.loadHistory(room).catch((error: unknown) => this.events.problem(String(error)));
    }
  }
}

/**
 * A token for `user` from the chat server's `POST /chat/token`, or `null` when the server
 * runs as an open demo (204: no token needed) and the name alone is enough.
 */
async function fetchToken(user: string): Promise<string | null> {
  const response = await fetch(new URL('/chat/token', location.href).href, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: user }),
  });
  if (response.status === 204) return null;
  if (!response.ok) throw new Error(`no token for "${user}": HTTP ${response.status}`);
  const { token } = (await response.json()) as { token: string };
  return token;
}
