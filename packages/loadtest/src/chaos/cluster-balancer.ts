/** The chaos cluster's balancer: the round-robin one of `round-robin.ts` in its own processes, or nginx. */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { track } from './cluster-processes.js';
import { compiled } from './cluster-workers.js';
import { NGINX_MISSING, NginxBalancer, nginxPath } from './nginx-balancer.js';

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

/** The balancers `chaos --balancer` takes. */
export const BALANCERS = ['nginx', 'node'] as const;
export type BalancerKind = (typeof BALANCERS)[number];

/** The chaos command's `--balancer` flag (`chaos-cli.ts`). */
export const BALANCER_FLAG = {
  key: 'balancer',
  flag: 'balancer',
  kind: 'string',
  default: 'node',
  mode: 'cluster',
  help: "the balancer in front of the nodes, round-robin with no affinity, passing over a node whose /readyz is not 200: node (the load tester's own, two Node processes) or nginx (the run's own nginx, reloaded when a node's readiness changes; needs nginx installed)",
} as const;

/**
 * Throws the fix for a `--balancer` that is none of `BALANCERS`, and with `program` for
 * nginx not installed (the command checks it before starting anything).
 */
export function checkBalancer(value: unknown, program: boolean): void {
  if (!(BALANCERS as readonly unknown[]).includes(value))
    throw new Error(`--balancer must be nginx or node, got "${String(value)}"`);
  if (program && value === 'nginx' && nginxPath() === null) throw new Error(NGINX_MISSING);
}

/** A running balancer: its loopback port, and how to stop it. */
export interface ClusterBalancer {
  port: number;
  stop(): Promise<void>;
}

/** The cluster's balancer of `kind` over `ports`: nginx (`nginx-balancer.ts`) or the Node one above. */
export async function startClusterBalancer(
  kind: BalancerKind,
  ports: readonly number[],
): Promise<ClusterBalancer> {
  if (kind === 'nginx') return NginxBalancer.start(ports);
  // Stopped with the run's other children (`stopAll`).
  return { port: await startBalancer(ports), stop: async () => undefined };
}
