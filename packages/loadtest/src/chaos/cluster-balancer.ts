/** Starts the round-robin balancer (`round-robin.ts`) in its own process over `ports`. */
import { fork } from 'node:child_process';
import { track } from './cluster-processes.js';
import { compiled } from './cluster-workers.js';

/** Resolves with the balancer's port once it listens on loopback. */
export function startBalancer(ports: readonly number[]): Promise<number> {
  const child = track(
    fork(
      compiled('round-robin'),
      ports.map((p) => String(p)),
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    ),
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
