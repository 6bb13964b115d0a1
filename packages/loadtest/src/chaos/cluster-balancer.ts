/** Starts the round-robin balancer (`round-robin.ts`) in its own processes over `ports`. */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { track } from './cluster-processes.js';
import { compiled } from './cluster-workers.js';

/** Balancer processes: one per core, at most 2 (its primary only accepts connections). */
export const BALANCER_WORKERS = Math.min(2, availableParallelism());

/** Resolves with the balancer's port once it listens on loopback. */
export function startBalancer(ports: readonly number[], workers = BALANCER_WORKERS): Promise<number> {
  const child = track(
    fork(compiled('round-robin'), [String(workers), ...ports.map((p) => String(p))], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the balancer did not start within 15 s')), 15_000);
    child.once('exit', (code) => reject(new Error(`the balancer exited with ${code}`)));
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m.type !== 'listening' || m.port === undefined) return;
      clearTimeout(timer);
      resolve(m.port);
    });
  });
}
