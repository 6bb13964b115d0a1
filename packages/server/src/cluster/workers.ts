/**
 * `bayou start --workers N`: the primary process forks N workers with `node:cluster`; they
 * share the listening port (the primary hands connections out round-robin) and each one
 * is a full Bayou node on the shared Redis. The primary serves no client: it starts the
 * workers, replaces one that crashes, and shuts them all down gracefully on SIGTERM/SIGINT.
 *
 * Crash-loop guard: a worker that dies within `minUptime` of listening (or before it
 * listened, once the cluster had started) is a fast crash. Each fast crash in a row waits
 * twice as long before the replacement (`baseDelay`, doubling up to `maxDelay`), so a
 * worker that cannot run does not spin the machine; after `maxFastCrashes` in a row the
 * primary gives up, stops the others and exits with code 1. A worker that ran longer than
 * `minUptime` is replaced at once and resets the count.
 */
import cluster, { type Worker } from 'node:cluster';

/** Messages between the primary and its workers (over the cluster IPC channel). */
export type WorkerMessage = { type: 'bayou:listening'; base: string } | { type: 'bayou:shutdown' };

export interface WorkersOptions {
  count: number;
  /** ms the workers get to close gracefully before they are killed. */
  shutdownTimeout: number;
  /** Writes one line for the operator (stdout). */
  say(line: string): void;
  /** Writes one line about a problem (stderr). */
  warn(line: string): void;
  /** Ends the primary. Default: `process.exit`. */
  exit?(code: number): void;
  /** The crash-loop guard's settings; each has a default. */
  restart?: Partial<RestartPolicy>;
}

export interface RestartPolicy {
  /** ms a worker must have listened for its exit not to count as a fast crash. Default `10000`. */
  minUptime: number;
  /** ms before replacing a worker after the first fast crash; doubles with each one in a row. Default `1000`. */
  baseDelay: number;
  /** Longest wait before a replacement, in ms. Default `30000`. */
  maxDelay: number;
  /** Fast crashes in a row after which the primary gives up and exits with code 1. Default `5`. */
  maxFastCrashes: number;
}

export const DEFAULT_RESTART: Readonly<RestartPolicy> = Object.freeze({
  minUptime: 10_000,
  baseDelay: 1000,
  maxDelay: 30_000,
  maxFastCrashes: 5,
});

function isMessage(m: unknown): m is WorkerMessage {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string';
}

/** Runs in the primary; resolves once every worker listens (it keeps serving after that). */
export function runWorkers(options: WorkersOptions): Promise<void> {
  const { count, shutdownTimeout, say, warn } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const policy: RestartPolicy = { ...DEFAULT_RESTART, ...options.restart };
  /** When each listening worker started listening. */
  const listening = new Map<Worker, number>();
  const alive = new Set<Worker>();
  let closing = false;
  let exitCode = 0;
  let started = false;
  /** Fast crashes in a row, and the replacements waiting for their delay. */
  let fastCrashes = 0;
  const pending = new Set<ReturnType<typeof setTimeout>>();
  let resolveStarted: () => void = () => undefined;
  const allStarted = new Promise<void>((resolve) => {
    resolveStarted = resolve;
  });

  const fork = (): void => {
    const worker = cluster.fork();
    alive.add(worker);
    worker.on('message', (m: unknown) => {
      if (!isMessage(m) || m.type !== 'bayou:listening') return;
      listening.set(worker, Date.now());
      if (!started && listening.size === count) {
        started = true;
        say(`Bayou listening on ${m.base} with ${count} workers (each a node of the cluster)`);
        resolveStarted();
      }
    });
    worker.on('exit', (code, signal) => {
      const listenedAt = listening.get(worker);
      listening.delete(worker);
      alive.delete(worker);
      if (closing) {
        if (alive.size === 0) exit(exitCode);
        return;
      }
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (!started && listenedAt === undefined) {
        // It could not start (bad config, Redis unreachable…): its error is on stderr.
        warn(`a worker exited with ${how} before it listened: stopping`);
        shutdownAll(1);
        return;
      }
      replace(worker, how, listenedAt);
    });
  };

  /** Replaces a worker that died: at once, or after a growing delay when it died young. */
  const replace = (worker: Worker, how: string, listenedAt: number | undefined): void => {
    const uptime = listenedAt === undefined ? 0 : Date.now() - listenedAt;
    if (uptime >= policy.minUptime) fastCrashes = 0;
    else fastCrashes++;
    const pid = worker.process.pid;
    if (fastCrashes >= policy.maxFastCrashes) {
      warn(
        `worker ${pid} exited with ${how}: ${fastCrashes} workers in a row died within ${policy.minUptime} ms ` +
          'of starting (its error is above): giving up, stopping the others',
      );
      shutdownAll(1);
      return;
    }
    const delay =
      fastCrashes === 0 ? 0 : Math.min(policy.maxDelay, policy.baseDelay * 2 ** (fastCrashes - 1));
    if (delay === 0) {
      warn(`worker ${pid} exited with ${how}: starting another`);
      fork();
      return;
    }
    warn(
      `worker ${pid} exited with ${how} ${uptime} ms after it started (fast crash ${fastCrashes} of ` +
        `${policy.maxFastCrashes}): starting another in ${delay} ms`,
    );
    const timer = setTimeout(() => {
      pending.delete(timer);
      fork();
    }, delay);
    pending.add(timer);
  };

  const shutdownAll = (code: number): void => {
    exitCode = Math.max(exitCode, code);
    if (closing) return;
    closing = true;
    for (const timer of pending) clearTimeout(timer);
    pending.clear();
    if (alive.size === 0) {
      exit(exitCode);
      return;
    }
    for (const w of alive) {
      if (w.isConnected()) w.send({ type: 'bayou:shutdown' } satisfies WorkerMessage);
      else w.process.kill('SIGTERM');
    }
    const timer = setTimeout(() => {
      warn(`workers took longer than ${shutdownTimeout} ms to shut down: killing them`);
      for (const w of alive) w.process.kill('SIGKILL');
      exit(1);
    }, shutdownTimeout + 1000);
    timer.unref();
  };

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (++signals > 1) {
      warn(`${signal} again: killing the workers without waiting`);
      for (const w of alive) w.process.kill('SIGKILL');
      exit(130);
      return;
    }
    say(`${signal}: shutting down ${listening.size} workers (send it again to exit at once)`);
    shutdownAll(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  for (let i = 0; i < count; i++) fork();
  return allStarted;
}

/** In a worker: tells the primary where it listens. */
export function reportListening(base: string): void {
  process.send?.({ type: 'bayou:listening', base } satisfies WorkerMessage);
}

/** In a worker: calls `shutdown` when the primary asks for it. */
export function onPrimaryShutdown(shutdown: () => void): void {
  process.on('message', (m: unknown) => {
    if (isMessage(m) && m.type === 'bayou:shutdown') shutdown();
  });
}

export const isWorker = (): boolean => cluster.isWorker;
