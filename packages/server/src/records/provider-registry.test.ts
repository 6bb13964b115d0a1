import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryBus } from '../engine/memory/memory-bus.js';
import { MemoryEngine } from '../engine/memory/memory-engine.js';
import { ProviderRegistry } from './provider-registry.js';

const log = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as unknown as FastifyBaseLogger;

async function node(bus: MemoryBus, id: string, events: string[], lingerMs = 100, leaseMs = 300) {
  const engine = new MemoryEngine({ bus });
  await engine.start({
    nodeId: id,
    deliver: () => undefined,
  });
  const discarded: string[] = [];
  const registry = new ProviderRegistry({ lingerMs, leaseMs }, engine.leases, engine.presence, log, (s) =>
    discarded.push(s),
  );
  registry.add('/fx/*', {
    onRequest: (s) => events.push(`${id} start ${s}`),
    onDiscard: (s) => events.push(`${id} stop ${s}`),
  });
  return { engine, registry, discarded };
}

describe('ProviderRegistry', () => {
  afterEach(() => vi.useRealTimers());

  it('starts a subject once for the whole cluster and stops it after the last subscriber anywhere, after the linger', async () => {
    vi.useFakeTimers();
    const bus = new MemoryBus();
    const events: string[] = [];
    const a = await node(bus, 'a', events);
    const b = await node(bus, 'b', events);
    await a.registry.subscribed('/fx/EUR');
    await b.registry.subscribed('/fx/EUR');
    expect(events).toEqual(['a start /fx/EUR']);
    a.registry.unsubscribed('/fx/EUR');
    await vi.advanceTimersByTimeAsync(500);
    // Still watched on b: keeps running on a.
    expect(events).toEqual(['a start /fx/EUR']);
    b.registry.unsubscribed('/fx/EUR');
    await vi.advanceTimersByTimeAsync(500);
    expect(events).toEqual(['a start /fx/EUR', 'a stop /fx/EUR']);
    expect(a.discarded).toEqual(['/fx/EUR']);
    a.registry.close();
    b.registry.close();
  });

  it('moves a provider to a node with subscribers when its node is gone', async () => {
    vi.useFakeTimers();
    const bus = new MemoryBus();
    const events: string[] = [];
    const a = await node(bus, 'a', events);
    const b = await node(bus, 'b', events);
    await a.registry.subscribed('/fx/JPY');
    await b.registry.subscribed('/fx/JPY');
    a.registry.close();
    await a.engine.close();
    await b.registry.renew();
    expect(events).toEqual(['a start /fx/JPY', 'b start /fx/JPY']);
    b.registry.close();
  });

  it('rejects the first subscriber when onRequest throws, so the subscribe can be refused', async () => {
    const bus = new MemoryBus();
    const engine = new MemoryEngine({ bus });
    await engine.start({
      nodeId: 'x',
      deliver: () => undefined,
    });
    const registry = new ProviderRegistry(
      { lingerMs: 10, leaseMs: 100 },
      engine.leases,
      engine.presence,
      log,
      () => undefined,
    );
    registry.add('/fx/*', {
      onRequest: () => {
        throw new Error('feed down');
      },
    });
    await expect(registry.subscribed('/fx/BAD')).rejects.toThrow('feed down');
    expect(await engine.leases.acquire('provider:/fx/BAD', 100)).toBe(true);
    registry.close();
  });
});
