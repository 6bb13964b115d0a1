import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBus, MemoryEngine } from '../src/index.js';
import { clusterScenario } from './cluster-contract.js';
import { type Started, startServer } from './start-server.js';
import { TestClient } from './test-client.js';

clusterScenario('memory', async () => {
  const bus = new MemoryBus();
  return { engine: () => new MemoryEngine({ bus }), destroy: async () => undefined };
});

describe('a memory engine of its own', () => {
  let started: Started | null = null;
  const clients: TestClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await started?.server.close();
    started = null;
  });

  it('declares one node, so a long-polling session takes deliveries in any reply', async () => {
    const engine = new MemoryEngine();
    expect(engine.capabilities).toEqual({ multiNode: false, backend: null });
    expect(new MemoryEngine({ bus: new MemoryBus() }).capabilities.multiNode).toBe(true);
    started = await startServer({ engine });
    const c = new TestClient(started.base, 'long-polling');
    clients.push(c);
    expect((await c.connect()).successful).toBe(true);
    expect(started.server.bayou.session(c.clientId)?.deliveryMode).not.toBe('connect-reply');
  });

  it('refuses an engine that does not declare its capabilities, saying what to add', async () => {
    await expect(startServer({ engine: { broker: {} } as never })).rejects.toThrow(
      /"engine" must be an Engine that declares its capabilities \(\{ multiNode: boolean/,
    );
  });
});
