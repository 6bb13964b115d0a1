/**
 * An in-process Bayeux server for unit tests: it hands the client a fake `fetch` and a
 * fake `WebSocket`, runs on the global timers (so fake timers drive it), and can be told
 * to misbehave the ways real networks do — refuse WebSocket, hang it, black-hole it, go
 * down, restart, deny handshakes, advise `reconnect: none`. Delivery follows CometD: a
 * session bound to a socket gets messages at once; otherwise they wait for its held
 * long-poll, and a new `/meta/connect` ends the one held before.
 */
import type { FetchFunction, Message, WebSocketConstructor } from '../src/index.js';

type Respond = (messages: Message[]) => void;

interface FakeSession {
  id: string;
  subscriptions: Set<string>;
  queue: Message[];
  held: { reply: Message; respond: Respond; timer: ReturnType<typeof setTimeout> } | null;
  socket: FakeSocket | null;
  /** A connect has been answered in this session. */
  connected: boolean;
  /** The session negotiated the replay extension. */
  replay: boolean;
}

/** One channel's history, as the replay extension keeps it. */
interface History {
  epoch: string;
  offset: number;
  messages: { offset: number; message: Message }[];
}

/**
 * `once`: answers the first frame, then black-holes (a WebSocket that answers one probe);
 * `oneway`: the server gets what the client sends, the client gets nothing back.
 */
export type WebSocketMode = 'accept' | 'refuse' | 'hang' | 'blackhole' | 'once' | 'oneway';

function matches(pattern: string, channel: string): boolean {
  if (pattern === channel) return true;
  if (pattern.endsWith('/**')) return channel.startsWith(pattern.slice(0, -2));
  if (pattern.endsWith('/*')) {
    const prefix = pattern.slice(0, -1);
    return channel.startsWith(prefix) && !channel.slice(prefix.length).includes('/');
  }
  return false;
}

export class FakeSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  readyState = 0;
  onopen: ((e: unknown) => void) | null = null;
  onmessage: ((e: { data: string }) => void) | null = null;
  onclose: ((e: { code: number }) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  mode: WebSocketMode;
  private readonly server: FakeBayeuxServer;

  constructor(server: FakeBayeuxServer, mode: WebSocketMode) {
    this.server = server;
    this.mode = mode;
    server.sockets.add(this);
    server.attempts.push({ kind: 'websocket', at: Date.now() });
    setTimeout(() => {
      if (mode === 'refuse' || server.down) return this.drop(1006, true);
      if (mode === 'hang' || this.readyState !== 0) return;
      this.readyState = 1;
      this.onopen?.({});
    }, 1);
  }

  send(data: string): void {
    if (this.readyState !== 1) throw new Error('not open');
    if (this.mode === 'blackhole') return;
    const messages = JSON.parse(data) as Message[];
    setTimeout(() => this.server.process(messages, this, (replies) => this.deliver(replies)), 1);
  }

  /** Server → client frame. */
  deliver(messages: Message[]): void {
    if (this.readyState !== 1 || messages.length === 0) return;
    if (this.mode === 'blackhole' || this.mode === 'oneway') return;
    if (this.mode === 'once') this.mode = 'blackhole';
    const frame = JSON.stringify(messages);
    setTimeout(() => {
      if (this.readyState === 1) this.onmessage?.({ data: frame });
    }, 1);
  }

  close(): void {
    this.readyState = 3;
    this.server.sockets.delete(this);
    this.server.unbind(this);
  }

  /** The network drops the socket. */
  drop(code = 1006, error = false): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.server.sockets.delete(this);
    this.server.unbind(this);
    if (error) this.onerror?.({});
    this.onclose?.({ code });
  }
}

export class FakeBayeuxServer {
  /** Every message the server received, in order. */
  readonly received: Message[] = [];
  readonly sessions = new Map<string, FakeSession>();
  readonly sockets = new Set<FakeSocket>();
  /** Every WebSocket opened and every POST made, with its (fake) time. */
  readonly attempts: { kind: 'websocket' | 'long-polling'; at: number }[] = [];
  websocketMode: WebSocketMode = 'accept';
  /** Connection types offered in the handshake reply. */
  connectionTypes = ['websocket', 'long-polling'];
  /** While true, requests fail and sockets do not open. */
  down = false;
  denyHandshake = false;
  /** The next connect is answered with `reconnect: none`. */
  refuseNextConnect = false;
  /** The first connect of the next new session drops its WebSocket instead of being answered. */
  dropFirstConnect = false;
  /** Subscribes still to answer `503::engine_unavailable` (the engine away, e.g. Redis restarting). */
  unavailableSubscribes = 0;
  /**
   * Speak Bayou's replay extension (positions, recovery on subscribe), keeping the last
   * `historySize` messages of each broadcast channel. History survives `restart()` (as
   * with a shared engine) until `forgetHistory()`.
   */
  replay = false;
  historySize = 100;
  readonly history = new Map<string, History>();
  private epochs = 0;
  timeout = 30000;
  /** Answer connects at once with the `multiple-clients` advice, as for a second browser tab. */
  multipleClients = false;
  /**
   * How a `/service` call is answered: `data` in the publish reply (`inline`), an ack then
   * a second message with `data` (`separate`, as @bayou/server does), or an ack only.
   */
  serviceStyle: 'inline' | 'separate' | 'ack-only' = 'inline';
  /** `/service` handlers: the reply's `data`, or a thrown error string. */
  readonly services = new Map<string, (data: unknown) => unknown>();
  private nextId = 0;
  private readonly polls = new Set<{ reject(err: Error): void }>();

  readonly WebSocket: WebSocketConstructor;
  readonly fetch: FetchFunction;

  constructor() {
    const server = this;
    this.WebSocket = class extends FakeSocket {
      constructor(_url: string) {
        super(server, server.websocketMode);
      }
    } as unknown as WebSocketConstructor;
    this.fetch = ((url: string, init: { body: string; signal?: AbortSignal }) =>
      this.handlePost(url, init)) as unknown as FetchFunction;
  }

  /** Messages received on `channel`. */
  count(channel: string): number {
    return this.received.filter((m) => m.channel === channel).length;
  }

  /** Publishes from the server side. */
  publish(channel: string, data: unknown): void {
    this.deliver({ channel, data, id: `s${++this.nextId}` });
  }

  /** The process dies and comes back: every session and socket is gone. */
  restart(): void {
    for (const s of this.sessions.values()) if (s.held) clearTimeout(s.held.timer);
    this.sessions.clear();
    for (const socket of [...this.sockets]) socket.drop();
    for (const p of [...this.polls]) p.reject(new TypeError('fetch failed'));
    this.polls.clear();
  }

  /**
   * Every session is gone but the connections stay, as when a session's node died behind
   * a balancer that keeps the client's connection to another node: the next message of
   * each session is answered `402`.
   */
  forgetSessions(): void {
    this.sessions.clear();
  }

  /** Goes down (`true`) or comes back (`false`); going down drops every connection. */
  setDown(down: boolean): void {
    if (down) this.restart();
    this.down = down;
  }

  unbind(socket: FakeSocket): void {
    for (const s of this.sessions.values()) if (s.socket === socket) s.socket = null;
  }

  private handlePost(_url: string, init: { body: string; signal?: AbortSignal }) {
    this.attempts.push({ kind: 'long-polling', at: Date.now() });
    return new Promise<{ ok: boolean; status: number; text(): Promise<string> }>((resolve, reject) => {
      if (this.down) return setTimeout(() => reject(new TypeError('fetch failed')), 1);
      const poll = { reject };
      this.polls.add(poll);
      init.signal?.addEventListener('abort', () => {
        this.polls.delete(poll);
        reject(new DOMException('aborted', 'AbortError'));
      });
      const messages = JSON.parse(init.body) as Message[];
      setTimeout(() => {
        this.process(messages, null, (replies) => {
          this.polls.delete(poll);
          const text = JSON.stringify(replies);
          resolve({ ok: true, status: 200, text: async () => text });
        });
      }, 1);
    });
  }

  /** Handles one batch; `respond` is called once with what goes back on this request/frame. */
  process(messages: Message[], socket: FakeSocket | null, respond: Respond): void {
    const out: Message[] = [];
    let held = false;
    for (const m of messages) {
      this.received.push(m);
      if (m.channel === '/meta/connect') {
        const r = this.connect(m, socket, respond);
        if (r) out.push(...r);
        else held = true;
      } else {
        out.push(...this.handle(m, socket));
      }
    }
    if (!held || out.length > 0) respond(out);
  }

  private reply(m: Message, extra: Partial<Message>): Message {
    const r: Message = { channel: m.channel, successful: true, ...extra };
    if (m.id !== undefined) r.id = m.id;
    return r;
  }

  private handle(m: Message, socket: FakeSocket | null): Message[] {
    if (m.channel === '/meta/handshake') {
      if (this.denyHandshake) {
        return [
          this.reply(m, { successful: false, error: '403::handshake_denied', advice: { reconnect: 'none' } }),
        ];
      }
      const id = `c${++this.nextId}`;
      this.sessions.set(id, {
        id,
        subscriptions: new Set(),
        queue: [],
        held: null,
        socket: null,
        connected: false,
        replay: this.replay && m.ext?.replay === true,
      });
      const reply = this.reply(m, {
        clientId: id,
        version: '1.0',
        supportedConnectionTypes: this.connectionTypes,
        advice: { reconnect: 'retry', interval: 0, timeout: this.timeout },
      });
      if (this.sessions.get(id)?.replay) reply.ext = { replay: true };
      return [reply];
    }
    const session = this.sessions.get(m.clientId ?? '');
    if (!session) {
      return [
        this.reply(m, {
          successful: false,
          error: '402::session_unknown',
          advice: { reconnect: 'handshake' },
        }),
      ];
    }
    if (socket) session.socket = socket;
    switch (m.channel) {
      case '/meta/subscribe': {
        if (this.unavailableSubscribes > 0) {
          this.unavailableSubscribes--;
          return [this.reply(m, { successful: false, error: '503::engine_unavailable' })];
        }
        session.subscriptions.add(m.subscription as string);
        const reply = this.reply(m, { subscription: m.subscription });
        return session.replay ? this.recover(m, reply) : [reply];
      }
      case '/meta/unsubscribe':
        session.subscriptions.delete(m.subscription as string);
        return [this.reply(m, { subscription: m.subscription })];
      case '/meta/disconnect':
        this.sessions.delete(session.id);
        if (session.held) this.complete(session);
        return [this.reply(m, {})];
    }
    if (m.channel.startsWith('/service/')) {
      const handler = this.services.get(m.channel);
      try {
        const data = handler ? handler(m.data) : null;
        if (this.serviceStyle === 'ack-only') return [this.reply(m, {})];
        if (this.serviceStyle === 'separate') return [this.reply(m, {}), this.reply(m, { data })];
        return [this.reply(m, { data })];
      } catch (err) {
        return [this.reply(m, { successful: false, error: String((err as Error).message) })];
      }
    }
    this.deliver({ channel: m.channel, data: m.data, id: m.id });
    return [this.reply(m, {})];
  }

  private connect(m: Message, socket: FakeSocket | null, respond: Respond): Message[] | null {
    const session = this.sessions.get(m.clientId ?? '');
    if (!session) {
      return [
        this.reply(m, {
          successful: false,
          error: '402::session_unknown',
          advice: { reconnect: 'handshake' },
        }),
      ];
    }
    if (this.dropFirstConnect && !session.connected && socket) {
      this.dropFirstConnect = false;
      socket.drop();
      return [];
    }
    session.connected = true;
    if (this.refuseNextConnect) {
      this.refuseNextConnect = false;
      return [this.reply(m, { successful: false, error: '403::go_away', advice: { reconnect: 'none' } })];
    }
    if (session.held) this.complete(session);
    session.socket = socket;
    if (this.multipleClients && !socket) {
      const advice = { reconnect: 'retry' as const, interval: 2000, 'multiple-clients': true };
      return [this.reply(m, { advice }), ...session.queue.splice(0)];
    }
    const reply = this.reply(m, { advice: { reconnect: 'retry', interval: 0, timeout: this.timeout } });
    const timeout = typeof m.advice?.timeout === 'number' ? m.advice.timeout : this.timeout;
    if (timeout === 0 || (!socket && session.queue.length > 0)) {
      return [reply, ...session.queue.splice(0)];
    }
    if (socket && session.queue.length > 0) socket.deliver(session.queue.splice(0));
    session.held = { reply, respond, timer: setTimeout(() => this.complete(session), timeout) };
    return null;
  }

  private complete(session: FakeSession): void {
    const held = session.held;
    if (!held) return;
    session.held = null;
    clearTimeout(held.timer);
    held.respond([held.reply, ...(session.socket ? [] : session.queue.splice(0))]);
  }

  private deliver(message: Message): void {
    let positioned: Message | null = null;
    if (this.replay && !message.channel.startsWith('/service/')) {
      const h = this.historyOf(message.channel);
      h.offset++;
      positioned = { ...message, ext: { ...message.ext, replay: { offset: h.offset, epoch: h.epoch } } };
      h.messages.push({ offset: h.offset, message: positioned });
      if (h.messages.length > this.historySize) h.messages.shift();
    }
    for (const session of this.sessions.values()) {
      if (![...session.subscriptions].some((p) => matches(p, message.channel))) continue;
      const m = session.replay && positioned ? positioned : message;
      if (session.socket) session.socket.deliver([m]);
      else {
        session.queue.push(m);
        if (session.held) this.complete(session);
      }
    }
  }

  /** History is lost (a restart with the memory engine): every channel gets a new epoch. */
  forgetHistory(): void {
    this.history.clear();
    this.epochs++;
  }

  private historyOf(channel: string): History {
    let h = this.history.get(channel);
    if (!h) {
      h = { epoch: `e${this.epochs}-${channel}`, offset: 0, messages: [] };
      this.history.set(channel, h);
    }
    return h;
  }

  /** The subscribe reply of a replay session, followed by what it missed. */
  private recover(m: Message, reply: Message): Message[] {
    const asked = (m.ext?.replay ?? {}) as Record<string, { offset: number; epoch: string }>;
    const names = Array.isArray(m.subscription) ? m.subscription : [m.subscription as string];
    const entries: Record<string, unknown> = {};
    const replayed: Message[] = [];
    for (const name of names) {
      if (name.includes('*')) continue;
      const h = this.historyOf(name);
      const from = asked[name];
      let recovered = true;
      if (from) {
        const oldest = h.messages[0]?.offset ?? h.offset + 1;
        recovered = from.epoch === h.epoch && from.offset >= oldest - 1 && from.offset <= h.offset;
        if (recovered) for (const e of h.messages) if (e.offset > from.offset) replayed.push(e.message);
      }
      entries[name] = { recovered, offset: h.offset, epoch: h.epoch };
    }
    if (Object.keys(entries).length > 0) reply.ext = { replay: entries };
    return [reply, ...replayed];
  }
}
