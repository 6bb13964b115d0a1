import { MemoryBus, MemoryEngine } from '../src/index.js';
import { clusterScenario } from './cluster-contract.js';

clusterScenario('memory', async () => {
  const bus = new MemoryBus();
  return { engine: () => new MemoryEngine({ bus }), destroy: async () => undefined };
});
