/**
 * The client side of the cluster chaos run: worker processes (`cluster-worker.ts`), each
 * holding a share of the clients; the parent talks to them all at once.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FromWorker, ToWorker, WorkerClient, WorkerResult } from './cluster-messages.js';
import { track } from './cluster-processes.js';

/** Forked scripts are compiled JavaScript; from source (tests) take the build. */
export function compiled(name: string): string {
  return fileURLToPath(
    import.meta.url.endsWith('.ts')
      ? new URL(`../../dist/chaos/${name}.js`, import.meta.url)
      : new URL(`./${name}.js`, import.meta.url),
  );
}

/**
 * Worker `w`'s share of `clients` out of `n`: a contiguous block, so each worker holds as
 * many of each transport as the plan alternates (`mixed`: even WebSocket, odd
 * long-polling). Taking every n-th client gave an even `n` one transport per worker, and
 * the long-polling ones (several times the CPU per client) lagged a second and more.
 */
export function workerShare<T>(clients: readonly T[], n: number, w: number): T[] {
  return clients.slice(Math.floor((w * clients.length) / n), Math.floor(((w + 1) * clients.length) / n));
}

/**
 * The storm's probe (`storm.ts`): every client whose index falls in the first pair of each
 * stride, `percent` % of `clients` in all (at least 20, both transports of a mixed plan), and
 * the rest; no probe (`[]`) below 40 clients or with `percent` 0.
 */
export function probeShare<T>(clients: readonly T[], percent: number): { probe: T[]; rest: T[] } {
  const wanted = Math.max(20, Math.round((clients.length * percent) / 100));
  const stride = 2 * Math.floor(clients.length / wanted);
  if (percent <= 0 || stride < 4) return { probe: [], rest: [...clients] };
  const probe: T[] = [];
  const rest: T[] = [];
  clients.forEach((c, i) => {
    (i % stride < 2 ? probe : rest).push(c);
  });
  return { probe, rest };
}

export class ClientWorkers {
  /** With a probe: its share of the clients (`probeShare`) goes to one more worker, the last. */
  private probePercent = 0;
  private readonly children: ChildProcess[] = [];
  private readonly waiting = new Map<string, { count: number; resolve: () => void }>();
  private readonly results: WorkerResult[] = [];
  /** The workers whose result came. */
  private readonly reported = new Set<number>();
  private failure: Error | null = null;
  /** Called each second by each worker: deliveries in that second and clients connected. */
  onTick: (worker: number, delivered: number, connected: number) => void = () => {};

  /**
   * `count` workers, and with `probePercent` > 0 one more, the probe: a few clients whose
   * arrival times no loaded event loop delays (a loaded worker's stayers wait behind its
   * moved clients' reconnects and recoveries, devices elsewhere would not).
   */
  constructor(count: number, probePercent = 0) {
    this.probePercent = probePercent;
    const total = count + (probePercent > 0 ? 1 : 0);
    for (let w = 0; w < total; w++) {
      const child = track(
        fork(compiled('cluster-worker'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
      );
      this.children.push(child);
      child.on('message', (m: FromWorker) => this.receive(w, m));
      // 'close', not 'exit': a worker's last message (its result, large at 10,000 clients) may
      // still be in the channel when 'exit' comes (two 10,000-client runs failed a worker so).
      child.once('close', (code, signal) => {
        // Its own result, not the count of all: a worker done first (the small probe) closed
        // while others had not reported yet, and was failed for it.
        if (!this.reported.has(w) && this.failure === null)
          this.fail(new Error(`client worker ${w} exited (${signal ?? code}) before reporting`));
      });
    }
  }

  /** Starts every worker's share of `clients` and resolves once all are subscribed. */
  async start(
    url: string,
    prefix: string,
    clients: readonly WorkerClient[],
    sessionLoss: boolean,
  ): Promise<void> {
    const { probe, rest } = probeShare(clients, this.probePercent);
    const n = this.children.length - (this.probePercent > 0 ? 1 : 0);
    const ready = this.wait('ready');
    this.children.forEach((child, w) => {
      const share = w < n ? workerShare(rest, n, w) : probe;
      child.send({
        type: 'start',
        url,
        prefix,
        clients: share,
        sessionLoss,
        probe: w >= n,
      } satisfies ToWorker);
    });
    await ready;
  }

  send(message: ToWorker): void {
    for (const c of this.children) if (c.connected) c.send(message);
  }

  /** Resolves once every worker's clients hold every acknowledged message, or after `ms`. */
  async complete(accepted: number[][], ms: number): Promise<boolean> {
    const done = this.wait('complete');
    this.send({ type: 'expect', accepted });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((r) => {
      timer = setTimeout(() => r(false), ms);
    });
    try {
      return await Promise.race([done.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  async finish(): Promise<WorkerResult[]> {
    const done = this.wait('result');
    this.send({ type: 'finish' });
    await done;
    return this.results;
  }

  private wait(type: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.set(type, { count: this.children.length, resolve });
      const check = setInterval(() => {
        if (this.failure !== null) {
          clearInterval(check);
          reject(this.failure);
        } else if (!this.waiting.has(type)) clearInterval(check);
      }, 100);
    });
  }

  private receive(worker: number, m: FromWorker): void {
    if (m.type === 'tick') this.onTick(worker, m.delivered, m.connected);
    else if (m.type === 'failed') this.fail(new Error(`client worker ${worker}: ${m.message}`));
    else {
      if (m.type === 'result') {
        this.results.push(m.result);
        this.reported.add(worker);
      }
      const w = this.waiting.get(m.type);
      if (w !== undefined && --w.count === 0) {
        this.waiting.delete(m.type);
        w.resolve();
      }
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
  }
}
