import { MemoryBus } from '../src/engine/memory/memory-bus.js';
import { MemoryEngine } from '../src/engine/memory/memory-engine.js';
import { engineContract } from './engine-contract.js';

engineContract({
  name: 'memory',
  expiryMs: 1000,
  async backend(tuning) {
    const bus = new MemoryBus(
      tuning && {
        historyTtl: tuning.epochTtlMs,
        historyChannels: tuning.historyChannels,
        sweepInterval: 20,
      },
    );
    return {
      create: () => new MemoryEngine({ bus }),
      // In one process a killed node is a closed one: its state goes at once.
      crash: (engine) => engine.close(),
      destroy: async () => undefined,
    };
  },
});
