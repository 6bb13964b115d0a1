import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ExtensionPipeline } from '../bayeux/extensions.js';
import type { Engine, SessionHandover, StreamPosition } from '../engine/engine.js';
import type { ReplayExtension } from '../extensions/replay-extension.js';
import type { Session, SessionHost } from '../session/session.js';
import { SessionRegistry } from '../session/session-registry.js';
import { LONG_POLLING_CARRIER } from '../transports/carrier-kinds.js';
import { type HandoverParts, SessionHandovers } from './session-handover.js';

const MAX_INTERVAL = 1000;

/** Channels with subscribers here, counting those left without (the index's `emptied`), and the lookups. */
class Followed extends Set<string> {
  emptied = 0;
  lookups = 0;
  override delete(channel: string): boolean {
    const had = super.delete(channel);
    if (had) this.emptied++;
    return had;
  }
  override clear(): void {
    if (this.size > 0) this.emptied++;
    super.clear();
  }
}

/** Handovers over a store that takes every record, with `subscribed` channels having subscribers. */
function handovers(
  subscribed: Followed,
  recovering: Map<string, StreamPosition | null> = new Map(),
): {
  h: SessionHandovers;
  registry: SessionRegistry;
  records: Map<string, string>;
  ttls: Map<string, number>;
} {
  const records = new Map<string, string>();
  const ttls = new Map<string, number>();
  const store: SessionHandover = {
    put: async (id, record, ttlMs) => {
      records.set(id, record);
      ttls.set(id, ttlMs);
    },
    claim: async () => null,
    route: async () => null,
    takeMail: async () => [],
    adopter: async () => null,
    release: async () => undefined,
  };
  const host: SessionHost = {
    scheduleFlush: () => undefined,
    overflow: () => true,
    maxQueuedMessages: 100,
    maxQueuedBytes: Number.POSITIVE_INFINITY,
  };
  const registry = new SessionRegistry(host, MAX_INTERVAL, 'n1');
  const parts: HandoverParts = {
    engine: { handover: store, capabilities: { multiNode: true, backend: null } } as unknown as Engine,
    log: { warn: () => undefined } as unknown as FastifyBaseLogger,
    maxInterval: MAX_INTERVAL,
    registry,
    connects: { complete: () => undefined },
    outbound: { flush: () => undefined },
    remove: (s: Session) => {
      registry.delete(s);
    },
    channels: { subscribe: () => undefined, subscribed: () => undefined, unsubscribe: () => undefined },
    extensions: new ExtensionPipeline(),
    replay: {
      recoverFor: () => undefined,
      recoveringFrom: (_: Session, channel: string) => recovering.get(channel),
    } as unknown as ReplayExtension,
    index: {
      subscriberCount: (channel) => {
        subscribed.lookups++;
        return subscribed.has(channel) ? 1 : 0;
      },
      get emptied() {
        return subscribed.emptied;
      },
    },
    cluster: { isAlive: () => true, takeOver: async () => false, sendDirect: () => false },
  };
  return { h: SessionHandovers.create(parts, 'n1') as SessionHandovers, registry, records, ttls };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('SessionHandovers', () => {
  it('keeps the last position only of channels with subscribers here, and drops those left without past 10,000', () => {
    const subscribed = new Followed();
    const { h } = handovers(subscribed);
    h.seen({ channel: '/nobody', payload: '{}', position: { offset: 1, epoch: 'e' } }, 0);
    expect(h.tracked).toBe(0);
    for (let i = 0; i < 10_000; i++) subscribed.add(`/c/${i}`);
    for (let i = 0; i < 10_000; i++)
      h.seen({ channel: `/c/${i}`, payload: '{}', position: { offset: 1, epoch: 'e' } }, 1);
    expect(h.tracked).toBe(10_000);
    // All but two lost their subscribers here: the next channel past the cap drops them.
    subscribed.clear();
    subscribed.add('/c/1').add('/c/2').add('/new');
    h.seen({ channel: '/new', payload: '{}', position: { offset: 1, epoch: 'e' } }, 1);
    expect(h.tracked).toBe(3);
    // Channels followed through a wildcard only are kept too, and dropped once nobody follows them.
    subscribed.add('/d/*');
    for (let i = 0; i < 9998; i++)
      h.seen({ channel: `/d/${i}`, payload: '{}', position: { offset: 1, epoch: 'e' } }, 1);
    expect(h.tracked).toBe(10_001);
    subscribed.delete('/d/*');
    h.seen({ channel: '/new', payload: '{}', position: { offset: 2, epoch: 'e' } }, 1);
    expect(h.tracked).toBe(3);
    // Reaching no session (each held it while recovering) on a channel followed here: kept.
    subscribed.add('/held');
    h.seen({ channel: '/held', payload: '{}', position: { offset: 7, epoch: 'e' } }, 0);
    expect(h.tracked).toBe(4);
  });

  it('does not pass over more than 10,000 followed channels at every publication, only after one lost its subscribers', () => {
    const subscribed = new Followed();
    const { h } = handovers(subscribed);
    const publish = (channel: string, offset = 1) =>
      h.seen({ channel, payload: '{}', position: { offset, epoch: 'e' } }, 1);
    for (let i = 0; i < 15_000; i++) subscribed.add(`/c/${i}`);
    for (let i = 0; i < 15_000; i++) publish(`/c/${i}`);
    expect(h.tracked).toBe(15_000);
    // Every channel still followed: a thousand more publications look nothing up.
    subscribed.lookups = 0;
    for (let i = 0; i < 1000; i++) publish(`/c/${i}`, 2);
    expect(subscribed.lookups).toBe(0);
    // One channel lost its subscribers here: the next publication passes once and drops it.
    subscribed.delete('/c/7');
    publish('/c/8', 3);
    expect(h.tracked).toBe(14_999);
    expect(subscribed.lookups).toBeGreaterThanOrEqual(14_999);
    subscribed.lookups = 0;
    publish('/c/9', 3);
    expect(subscribed.lookups).toBe(0);
  });

  it('forgets a handed-over clientId after maxInterval, as newer ones are handed over', async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
    const { h, registry, records } = handovers(new Followed());
    const first = registry.create(LONG_POLLING_CARRIER);
    expect(await h.handOver(first, 0)).toBe(true);
    expect(records.has(first.id)).toBe(true);
    expect(registry.get(first.id)).toBeUndefined();
    expect(h.handedOver(first.id)).toBe(true);
    expect(h.remembered).toBe(1);
    vi.setSystemTime(1_000_000 + MAX_INTERVAL + 1);
    expect(h.handedOver(first.id)).toBe(false);
    const second = registry.create(LONG_POLLING_CARRIER);
    await h.handOver(second, 0);
    expect(h.remembered).toBe(1);
    expect(h.handedOver(second.id)).toBe(true);
  });

  it('keeps the record (and the clientId remembered) for the interval its client is told to wait, plus maxInterval', async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
    const { h, registry, ttls } = handovers(new Followed());
    const paced = registry.create(LONG_POLLING_CARRIER);
    // A paced drain told this client to come back after 4 s.
    expect(await h.handOver(paced, 4000)).toBe(true);
    expect(ttls.get(paced.id)).toBe(MAX_INTERVAL + 4000);
    vi.setSystemTime(1_000_000 + MAX_INTERVAL + 3999);
    expect(h.handedOver(paced.id)).toBe(true);
    vi.setSystemTime(1_000_000 + MAX_INTERVAL + 4001);
    expect(h.handedOver(paced.id)).toBe(false);
  });

  it('remembers what it hands over at its drain until it closes, past the record TTL (a long-poll forwarded here later goes to the adopter)', async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
    const { h, registry } = handovers(new Followed());
    const before = registry.create(LONG_POLLING_CARRIER);
    await h.handOver(before, 0);
    h.draining();
    const paced = registry.create(LONG_POLLING_CARRIER);
    expect(await h.handOver(paced, 500)).toBe(true);
    // A 20 s spread: this node still drains long after the record's TTL.
    vi.setSystemTime(1_000_000 + MAX_INTERVAL + 20_000);
    expect(h.handedOver(paced.id)).toBe(true);
    // Handed over before the drain (a WebSocket taken over): forgotten after its TTL, as before.
    expect(h.handedOver(before.id)).toBe(false);
  });

  it("records where a session being recovered stands, not the node's last position (its live messages are held)", async () => {
    const subscribed = new Followed(['/a', '/b', '/c']);
    const recovering = new Map<string, StreamPosition | null>([
      ['/a', { offset: 3, epoch: 'e' }],
      ['/b', null],
    ]);
    const { h, registry, records } = handovers(subscribed, recovering);
    const session = registry.create(LONG_POLLING_CARRIER);
    for (const name of subscribed) session.subscriptions.add(name);
    for (const channel of subscribed)
      h.seen({ channel, payload: '{}', position: { offset: 9, epoch: 'e' } }, 0);
    expect(await h.handOver(session, 0)).toBe(true);
    const record = JSON.parse(records.get(session.id) as string) as {
      positions: Record<string, StreamPosition>;
    };
    // /a recovers from 3 (what is held after it comes from history again); /b's start is not
    // known yet (resubscribed from the latest); /c was not being recovered: the node's last.
    expect(record.positions).toEqual({ '/a': { offset: 3, epoch: 'e' }, '/c': { offset: 9, epoch: 'e' } });
  });
});
