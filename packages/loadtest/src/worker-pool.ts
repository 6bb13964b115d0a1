/**
 * Runs the slices of a scenario in worker processes that meet at named barriers: a barrier
 * opens when every worker has reached it. Results travel over IPC with structured clone
 * ("advanced" serialization), so typed arrays arrive as typed arrays.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PartResult, Slice } from './context.js';
import type { Protocol } from './drivers.js';
import type { LoadtestOptions, Scenario } from './options.js';
import type { SeriesPoint } from './stats.js';
import type { RunnerMessage, WorkerInput, WorkerMessage } from './worker.js';

// Workers run compiled JavaScript; when this module runs from source (tests), use the build.
const WORKER_PATH = fileURLToPath(
  import.meta.url.endsWith('.ts')
    ? new URL('../dist/worker.js', import.meta.url)
    : new URL('./worker.js', import.meta.url),
);

export interface WorkerHooks {
  onTick: (worker: number, point: SeriesPoint, connected: number) => void;
  onWindow: (event: 'open' | 'close') => void;
}

export async function runWorkers(
  scenario: Scenario,
  options: LoadtestOptions,
  protocol: Protocol,
  slices: readonly Slice[],
  hooks: WorkerHooks,
): Promise<PartResult[]> {
  const arrived = new Map<string, number>();
  const children: ChildProcess[] = [];
  const send = (child: ChildProcess, m: RunnerMessage) => child.send(m);
  const results = slices.map((slice, w) => {
    const child = fork(WORKER_PATH, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    const input: WorkerInput = { scenario, options: { ...options }, slice, protocol };
    send(child, { type: 'start', input });
    return new Promise<PartResult>((resolve, reject) => {
      child.on('error', reject);
      // 'close', not 'exit': a large result may still be in the IPC channel when the process exits.
      child.on('close', (code) => reject(new Error(`worker ${w} exited with ${code} before reporting`)));
      child.on('message', (m: WorkerMessage) => {
        if (m.type === 'done') resolve(m.result);
        else if (m.type === 'failed') reject(new Error(m.message));
        else if (m.type === 'tick') hooks.onTick(w, m.point, m.connected);
        else if (m.type === 'window' && w === 0) hooks.onWindow(m.event);
        else if (m.type === 'barrier') {
          const n = (arrived.get(m.name) ?? 0) + 1;
          arrived.set(m.name, n);
          if (n === slices.length) for (const c of children) send(c, { type: 'go', name: m.name });
        }
      });
    });
  });
  try {
    return await Promise.all(results);
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill();
  }
}
