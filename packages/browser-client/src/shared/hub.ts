/**
 * The hub of a shared connection, in the leader tab: one `BayouClient` (the session and
 * its connection) serving every tab. Subscriptions are counted per channel — the first
 * tab to want a channel subscribes, the last to leave unsubscribes — and each delivery is
 * broadcast once per hub subscription; the tabs hand it to their own handlers. A tab that
 * goes away without a word is noticed through its Web Lock (held for its lifetime): the
 * hub's request for it is granted when the tab is gone. After a takeover the hub starts
 * from the earliest position the tabs report for each channel, so the replay extension
 * recovers what the old leader had not passed on; each tab drops what it already saw.
 */
import { EXT_RECORD_REQUEST, META_DISCONNECT, META_SUBSCRIBE } from '@bayou/protocol';
import { BayouClient } from '../client.js';
import type { BayouClientOptions } from '../options.js';
import type { RecordOptions } from '../records/record-codec.js';
import { Recovery } from '../recovery.js';
import type { Subscription } from '../subscriptions.js';
import type { TransportReason } from '../transport-selector.js';
import type { Message } from '../types.js';
import { type Call, type FromHub, plainError, type ToHub } from './wire.js';

/** Milliseconds a new leader waits for the tabs' positions before it connects. */
const TAKEOVER_GATHER = 150;

interface Channel {
  readonly tabs: Set<string>;
  sub: Subscription;
  /** Record options of each tab following this channel as a record subject. */
  readonly records: Map<string, RecordOptions>;
}

export class Hub {
  readonly id = randomId();
  private readonly client: BayouClient;
  private readonly recovery: Recovery;
  private readonly channels = new Map<string, Channel>();
  /** The channels of each tab, and the last call id it had handled (resends are skipped). */
  private readonly tabs = new Map<string, { channels: Set<string>; lastCall: number }>();
  private readonly stop = new AbortController();
  /** Why the transport in use is the one (the client's last `transport` event). */
  private reason: TransportReason = 'preferred';
  /**
   * The leader's page going away: a beacon (it outlives the page) ends the session at once,
   * rather than leaving it to expire (`maxInterval`) beside the next leader's.
   */
  private readonly pageHide = () => {
    const clientId = this.client.clientId;
    if (clientId === null || typeof navigator.sendBeacon !== 'function') return;
    navigator.sendBeacon(this.url, JSON.stringify([{ channel: META_DISCONNECT, clientId }]));
  };

  constructor(
    private readonly url: string,
    options: BayouClientOptions,
    private readonly self: string,
    private readonly lockName: (tab: string) => string,
    private readonly post: (message: FromHub) => void,
  ) {
    this.recovery = new Recovery(options.recover !== false, (info) => this.post({ t: 'gap', info }));
    // The hub recovers with its own Recovery (seeded with the tabs' positions), not the client's.
    this.client = new BayouClient(url, { ...options, sharedConnection: false, recover: false });
    this.client.use(this.recovery);
    this.client.use({ outgoing: (m) => this.recordRequest(m), incoming: (m) => this.gaps(m) });
    this.client.on('state', () => this.up());
    this.client.on('transport', (_transport, _previous, reason) => {
      this.reason = reason;
      this.up();
    });
    this.client.on('error', (error) => this.post({ t: 'err', error: plainError(error), fatal: false }));
    addEventListener('pagehide', this.pageHide);
  }

  /** Tells the tabs a new hub leads and connects (after the tabs' positions, on a takeover). */
  start(takeover: boolean): void {
    this.post({ t: 'lead', hub: this.id });
    const connect = () => {
      if (this.stop.signal.aborted) return;
      this.client.connect().catch((error) => this.post({ t: 'err', error: plainError(error), fatal: true }));
    };
    if (takeover) setTimeout(connect, TAKEOVER_GATHER);
    else connect();
  }

  close(): Promise<void> {
    this.stop.abort();
    removeEventListener('pagehide', this.pageHide);
    return this.client.disconnect();
  }

  handle(m: ToHub): void {
    if (this.stop.signal.aborted) return;
    const tab = this.tab(m.from);
    switch (m.t) {
      case 'hello':
        this.up();
        return;
      case 'bye':
        this.gone(m.from);
        return;
      case 'sub':
        tab.channels.add(m.ch);
        for (const [channel, p] of Object.entries(m.pos ?? {})) this.recovery.seed(channel, p);
        this.subscribe(m.from, m.ch, m.rec);
        return;
      case 'unsub':
        tab.channels.delete(m.ch);
        this.drop(m.from, m.ch);
        return;
      case 'call': {
        const calls = m.calls.filter((c) => c.id > tab.lastCall);
        if (calls.length === 0) return;
        tab.lastCall = (calls.at(-1) as Call).id;
        this.client.batch(() => {
          for (const c of calls) this.call(m.from, c);
        });
      }
    }
  }

  /** The session's state, transport (and why that one) and clientId, to every tab. */
  private up(): void {
    const { state, transport, clientId } = this.client;
    this.post({ t: 'up', state, transport, clientId, reason: this.reason });
  }

  /** A tab seen for the first time is watched through its lock. */
  private tab(id: string): { channels: Set<string>; lastCall: number } {
    let tab = this.tabs.get(id);
    if (tab === undefined) {
      tab = { channels: new Set(), lastCall: 0 };
      this.tabs.set(id, tab);
      if (id !== this.self) {
        navigator.locks
          .request(this.lockName(id), { signal: this.stop.signal }, () => this.gone(id))
          .catch(() => {});
      }
    }
    return tab;
  }

  /** A tab left (said bye, or its lock was released): its channels are given up. */
  private gone(id: string): void {
    const tab = this.tabs.get(id);
    if (tab === undefined) return;
    this.tabs.delete(id);
    for (const channel of tab.channels) this.drop(id, channel);
  }

  private subscribe(from: string, ch: string, rec: RecordOptions | undefined): void {
    let channel = this.channels.get(ch);
    if (channel === undefined) {
      channel = { tabs: new Set(), sub: this.follow(ch), records: new Map() };
      this.channels.set(ch, channel);
      if (rec !== undefined) channel.records.set(from, rec);
    } else if (rec !== undefined && !channel.tabs.has(from)) {
      // A record subject the hub follows already: subscribe again (with the merged options),
      // so the server sends a fresh snapshot that the new tab needs.
      channel.records.set(from, rec);
      const old = channel.sub;
      const c = channel;
      this.client.batch(() => {
        old.unsubscribe();
        c.sub = this.follow(ch);
      });
    }
    channel.tabs.add(from);
    channel.sub.ready.then(
      () => this.post({ t: 'ok', to: from, ch, pos: this.recovery.positions.get(ch) }),
      (error) => this.post({ t: 'ok', to: from, ch, error: plainError(error) }),
    );
  }

  private follow(ch: string): Subscription {
    return this.client.subscribe(ch, (m) => this.post({ t: 'd', s: ch, m }));
  }

  private drop(from: string, ch: string): void {
    const channel = this.channels.get(ch);
    if (channel === undefined || !channel.tabs.delete(from)) return;
    channel.records.delete(from);
    if (channel.tabs.size > 0) return;
    this.channels.delete(ch);
    channel.sub.unsubscribe();
    this.recovery.forget(ch);
  }

  private call(from: string, c: Call): void {
    const sent = c.req ? this.client.request(c.ch, c.data) : this.client.publish(c.ch, c.data);
    sent.then(
      (value) => this.post({ t: 'res', to: from, id: c.id, value }),
      (error) => this.post({ t: 'res', to: from, id: c.id, error: plainError(error) }),
    );
  }

  /** A record subject's subscribe asks for the merge of its tabs' options. */
  private recordRequest(m: Message): Message {
    if (m.channel !== META_SUBSCRIBE || typeof m.subscription !== 'string') return m;
    const records = this.channels.get(m.subscription)?.records;
    if (records === undefined || records.size === 0) return m;
    const request = mergeRecordOptions([...records.values()]);
    if (request.fields === undefined && request.maxFrequency === undefined) return m;
    return { ...m, ext: { ...m.ext, [EXT_RECORD_REQUEST]: request } };
  }

  /** What a subscribe reply could not recover goes to every tab (those that follow it report it). */
  private gaps(m: Message): Message {
    if (m.channel === META_SUBSCRIBE && m.successful === true) {
      for (const info of this.recovery.takeGaps(m.id)) this.post({ t: 'gap', info });
    }
    return m;
  }
}

/** The union of the fields (all if any wants all), the highest frequency. */
function mergeRecordOptions(all: RecordOptions[]): RecordOptions {
  let fields: Set<string> | undefined = new Set();
  let maxFrequency: number | undefined;
  for (const o of all) {
    if (o.fields === undefined) fields = undefined;
    else for (const f of o.fields) fields?.add(f);
    if (o.maxFrequency !== undefined) maxFrequency = Math.max(maxFrequency ?? 0, o.maxFrequency);
  }
  return { fields: fields === undefined ? undefined : [...fields], maxFrequency };
}

export function randomId(): string {
  return Math.random().toString(36).slice(2) + Date.now().toString(36);
}
