/**
 * `bayou start --workers N`: the primary process forks N workers with `node:cluster`; they
 * share the listening port (the primary hands connections out round-robin) and each one
 * is a full Bayou node on the shared Redis. The primary serves no client: it starts the
 * workers, replaces one that crashes, and shuts them all down gracefully on SIGTERM/SIGINT.
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
}

function isMessage(m: unknown): m is WorkerMessage {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string';
}

/** Runs in the primary; resolves once every worker listens (it keeps serving after that). */
export function runWorkers(options: WorkersOptions): Promise<void> {
  const { count, shutdownTimeout, say, warn } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const listening = new Set<Worker>();
  const alive = new Set<Worker>();
  let closing = false;
  let exitCode = 0;
  let started = false;
  let resolveStarted: () => void = () => undefined;
  const allStarted = new Promise<void>((resolve) => {
    resolveStarted = resolve;
  });

  const fork = (): void => {
    const worker = cluster.fork();
    alive.add(worker);
    worker.on('message', (m: unknown) => {
      if (!isMessage(m) || m.type !== 'bayou:listening') return;
      listening.add(worker);
      if (!started && listening.size === count) {
        started = true;
        say(`Bayou listening on ${m.base} with ${count} workers (each a node of the cluster)`);
        resolveStarted();
      }
    });
    worker.on('exit', (code, signal) => {
      const wasListening = listening.delete(worker);
      alive.delete(worker);
      if (closing) {
        if (alive.size === 0) exit(exitCode);
        return;
      }
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (!wasListening) {
        // It could not start (bad config, Redis unreachable…): its error is on stderr.
        warn(`a worker exited with ${how} before it listened: stopping`);
        shutdownAll(1);
        return;
      }
      warn(`worker ${worker.process.pid} exited with ${how}: starting another`);
      fork();
    });
  };

  const shutdownAll = (code: number): void => {
    exitCode = Math.max(exitCode, code);
    if (closing) return;
    closing = true;
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
