import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBus } from '../engine/memory/memory-bus.js';
import { MemoryEngine } from '../engine/memory/memory-engine.js';
import { ChannelOccupancy, type OccupancyChange } from './channel-occupancy.js';

const log = { warn: () => undefined } as unknown as FastifyBaseLogger;
const engines: MemoryEngine[] = [];

afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

async function node(bus: MemoryBus, id: string, seen: string[], start = true, active = true) {
  const engine = new MemoryEngine({ bus });
  engines.push(engine);
  const occupancy = new ChannelOccupancy(
    engine.presence,
    (change: OccupancyChange, channel) => seen.push(`${id} ${change} ${channel}`),
    log,
    1000,
    active,
  );
  const started = () =>
    engine.start({
      nodeId: id,
      deliver: () => undefined,
    });
  if (start) await started();
  return { engine, occupancy, started };
}

const settled = (o: ChannelOccupancy) => o.close();

describe('ChannelOccupancy', () => {
  it('emits once per cluster-wide transition and forgets a channel once it has no subscriber here', async () => {
    const bus = new MemoryBus();
    const seen: string[] = [];
    const a = await node(bus, 'a', seen);
    const b = await node(bus, 'b', seen);
    for (let i = 0; i < 100; i++) a.occupancy.added(`/c/${i}`);
    a.occupancy.added('/c/0');
    b.occupancy.added('/c/0');
    await Promise.all([settled(a.occupancy), settled(b.occupancy)]);
    expect(seen.filter((s) => s.includes('occupied'))).toHaveLength(100);
    expect(a.occupancy.size).toBe(100);
    for (let i = 0; i < 100; i++) a.occupancy.removed(`/c/${i}`);
    a.occupancy.removed('/c/0');
    await settled(a.occupancy);
    // /c/0 is still held by b: 99 vacated, and nothing left in a's map.
    expect(seen.filter((s) => s.includes('vacated'))).toHaveLength(99);
    expect(a.occupancy.size).toBe(0);
    b.occupancy.removed('/c/0');
    await settled(b.occupancy);
    expect(seen.at(-1)).toBe('b vacated /c/0');
    expect(b.occupancy.size).toBe(0);
  });

  it('only counts until activated, forgets vacated channels meanwhile, then reports what is occupied', async () => {
    const seen: string[] = [];
    const a = await node(new MemoryBus(), 'a', seen, true, false);
    a.occupancy.added('/kept');
    a.occupancy.added('/gone');
    a.occupancy.removed('/gone');
    await settled(a.occupancy);
    expect(seen).toEqual([]);
    expect(a.occupancy.size).toBe(1); // the eviction path while dormant
    a.occupancy.activate();
    await settled(a.occupancy);
    expect(seen).toEqual(['a occupied /kept']);
    a.occupancy.removed('/kept');
    await settled(a.occupancy);
    expect(seen).toEqual(['a occupied /kept', 'a vacated /kept']);
    expect(a.occupancy.size).toBe(0);
  });

  it('collapses a subscribe and unsubscribe racing each other, and never goes below zero', async () => {
    const seen: string[] = [];
    const a = await node(new MemoryBus(), 'a', seen);
    a.occupancy.added('/x');
    a.occupancy.removed('/x');
    a.occupancy.added('/x');
    a.occupancy.removed('/x');
    a.occupancy.removed('/x');
    await settled(a.occupancy);
    expect(seen).toEqual(['a occupied /x', 'a vacated /x']);
    expect(a.occupancy.size).toBe(0);
  });

  it('retries a failed engine call from its sweep', async () => {
    const seen: string[] = [];
    const a = await node(new MemoryBus(), 'a', seen, false);
    a.occupancy.added('/later');
    await settled(a.occupancy);
    expect(a.occupancy.errors).toBe(1);
    expect(seen).toEqual([]);
    await a.started();
    await a.occupancy.sweep();
    await settled(a.occupancy);
    expect(seen).toEqual(['a occupied /later']);
  });
});
