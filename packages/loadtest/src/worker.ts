/**
 * Worker process entry: runs one slice of a scenario and reports to the runner over IPC.
 * Workers are processes, not threads, because the limit that matters is file descriptors
 * per process (`ulimit -n`): each worker holds its own sockets.
 */
import type { PartResult, Slice } from './context.js';
import { driverFor, type Protocol } from './drivers.js';
import type { LoadtestOptions, Scenario } from './options.js';
import { runPart } from './run-part.js';
import type { SeriesPoint } from './stats.js';

export interface WorkerInput {
  scenario: Scenario;
  options: LoadtestOptions;
  slice: Slice;
  protocol: Protocol;
}

/** Messages the runner sends to a worker. */
export type RunnerMessage = { type: 'start'; input: WorkerInput } | { type: 'go'; name: string };

/** Messages a worker sends to the runner. */
export type WorkerMessage =
  | { type: 'barrier'; name: string }
  | { type: 'tick'; point: SeriesPoint; connected: number }
  | { type: 'window'; event: 'open' | 'close' }
  | { type: 'done'; result: PartResult }
  | { type: 'failed'; message: string };

const waiting = new Map<string, () => void>();
const post = (m: WorkerMessage, then?: () => void) => process.send!(m, undefined, {}, then);

function start(input: WorkerInput): void {
  runPart(input.scenario, input.options, input.slice, driverFor(input.protocol, input.options.transport), {
    barrier: (name) =>
      new Promise<void>((resolve) => {
        waiting.set(name, resolve);
        post({ type: 'barrier', name });
      }),
    onTick: (point, connected) => post({ type: 'tick', point, connected }),
    onWindow: (event) => post({ type: 'window', event }),
  }).then(
    (result) => post({ type: 'done', result }, () => process.disconnect()),
    (error: Error) => post({ type: 'failed', message: error.message }, () => process.disconnect()),
  );
}

process.on('message', (m: RunnerMessage) => {
  if (m.type === 'start') start(m.input);
  else waiting.get(m.name)?.();
});
