/** Worker-thread entry: runs one slice of a scenario and reports to the runner. */
import { parentPort, workerData } from 'node:worker_threads';
import type { Slice } from './context.js';
import { driverFor, type Protocol } from './drivers.js';
import type { LoadtestOptions, Scenario } from './options.js';
import { runPart } from './run-part.js';

export interface WorkerInput {
  scenario: Scenario;
  options: LoadtestOptions;
  slice: Slice;
  protocol: Protocol;
}

/** Messages a worker posts to the runner. */
export type WorkerMessage =
  | { type: 'barrier'; name: string }
  | { type: 'tick'; point: import('./stats.js').SeriesPoint; connected: number }
  | { type: 'window'; event: 'open' | 'close' }
  | { type: 'done'; result: import('./context.js').PartResult }
  | { type: 'failed'; message: string };

const port = parentPort!;
const input = workerData as WorkerInput;
const waiting = new Map<string, () => void>();
port.on('message', (m: { type: 'go'; name: string }) => waiting.get(m.name)?.());
const post = (m: WorkerMessage) => port.postMessage(m);

runPart(input.scenario, input.options, input.slice, driverFor(input.protocol, input.options.transport), {
  barrier: (name) =>
    new Promise<void>((resolve) => {
      waiting.set(name, resolve);
      post({ type: 'barrier', name });
    }),
  onTick: (point, connected) => post({ type: 'tick', point, connected }),
  onWindow: (event) => post({ type: 'window', event }),
}).then(
  (result) => post({ type: 'done', result }),
  (error: Error) => post({ type: 'failed', message: error.message }),
);
