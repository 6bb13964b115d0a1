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
export type WorkerMessage =
  | { type: 'bayou:listening'; base: string }
  | { type: 'bayou:failed'; line: string }
  | { type: 'bayou:shutdown' };

export interface WorkersOptions {
  count: number;
  /** ms the workers get to close gracefully before they are killed. */
  shutdownTimeout: number;
  /** Writes one line for the operator (stdout). */
  say(line: string): void;
  /** Writes one line about a problem (stderr). */
  warn(line: string): void;
  /** Writes a worker's start-up failure, the first one only (default: stderr, as is). */
  failed?(line: string): void;
  /** Ends the primary. Default: `process.exit`. */
  exit?(code: number): void;
  /** The crash-loop guard's settings; each has a default. */
  restart?: Partial<RestartPolicy>;
  /** Node options the workers are forked with. Default: the primary's own (`process.execArgv`). */
  execArgv?: readonly string[];
  /** Added to the workers' environment (the primary's own, which they inherit). */
  env?: Readonly<Record<string, string>>;
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
  if (options.execArgv) cluster.setupPrimary({ execArgv: [...options.execArgv] });
  const primary = new Primary(options);
  process.on('SIGTERM', (signal) => primary.onSignal(signal));
  process.on('SIGINT', (signal) => primary.onSignal(signal));
  for (let i = 0; i < options.count; i++) primary.fork();
  return primary.allStarted;
}

/** The primary's state: the workers alive and listening, the crash-loop count, the shutdown. */
class Primary {
  readonly allStarted: Promise<void>;
  private readonly exit: (code: number) => void;
  private readonly policy: RestartPolicy;
  /** When each listening worker started listening. */
  private readonly listening = new Map<Worker, number>();
  private readonly alive = new Set<Worker>();
  /** Replacements waiting for their delay. */
  private readonly pending = new Set<ReturnType<typeof setTimeout>>();
  private closing = false;
  private exitCode = 0;
  private started = false;
  /** Fast crashes in a row. */
  private fastCrashes = 0;
  private signals = 0;
  /** The first start-up failure a worker reported: the others that fail alike are not repeated. */
  private failure: string | null = null;
  private resolveStarted: () => void = () => undefined;

  constructor(private readonly options: WorkersOptions) {
    this.exit = options.exit ?? ((code: number) => process.exit(code));
    this.policy = { ...DEFAULT_RESTART, ...options.restart };
    this.allStarted = new Promise<void>((resolve) => {
      this.resolveStarted = resolve;
    });
  }

  fork(): void {
    const worker = cluster.fork(this.options.env);
    this.alive.add(worker);
    worker.on('message', (m: unknown) => {
      if (isMessage(m) && m.type === 'bayou:failed') this.reportFailure(m.line);
      if (!isMessage(m) || m.type !== 'bayou:listening') return;
      this.listening.set(worker, Date.now());
      if (!this.started && this.listening.size === this.options.count) {
        this.started = true;
        this.options.say(
          `Bayou listening on ${m.base} with ${this.options.count} workers (each a node of the cluster)`,
        );
        this.resolveStarted();
      }
    });
    worker.on('exit', (code, signal) => {
      const exited = () =>
        this.exited(worker, signal ? `signal ${signal}` : `code ${code}`, signal ? null : code);
      // Its last messages (a start-up failure) are read before its channel closes.
      if (worker.isConnected()) worker.once('disconnect', exited);
      else exited();
    });
  }

  private reportFailure(line: string): void {
    if (this.failure !== null) return;
    this.failure = line;
    (this.options.failed ?? ((l: string) => process.stderr.write(`${l}\n`)))(line);
  }

  private exited(worker: Worker, how: string, code: number | null): void {
    const listenedAt = this.listening.get(worker);
    this.listening.delete(worker);
    this.alive.delete(worker);
    if (this.closing) {
      if (this.alive.size === 0) this.exit(this.exitCode);
      return;
    }
    if (!this.started && listenedAt === undefined) {
      // It could not start (bad config, port in use, Redis unreachable…): its one-line
      // reason is on stderr, once; its code 2 (a start-up failure the operator fixes) is ours too,
      // whichever worker's exit is seen first once one of them has told its reason.
      if (this.failure === null)
        this.options.warn(`a worker exited with ${how} before it listened: stopping`);
      this.shutdownAll(code === 2 || this.failure !== null ? 2 : 1);
      return;
    }
    this.replace(worker, how, listenedAt);
  }

  /** Replaces a worker that died: at once, or after a growing delay when it died young. */
  private replace(worker: Worker, how: string, listenedAt: number | undefined): void {
    const { policy, options } = this;
    const uptime = listenedAt === undefined ? 0 : Date.now() - listenedAt;
    if (uptime >= policy.minUptime) this.fastCrashes = 0;
    else this.fastCrashes++;
    const pid = worker.process.pid;
    if (this.fastCrashes >= policy.maxFastCrashes) {
      options.warn(
        `worker ${pid} exited with ${how}: ${this.fastCrashes} workers in a row died within ${policy.minUptime} ms ` +
          'of starting (its error is above): giving up, stopping the others',
      );
      this.shutdownAll(1);
      return;
    }
    const delay =
      this.fastCrashes === 0 ? 0 : Math.min(policy.maxDelay, policy.baseDelay * 2 ** (this.fastCrashes - 1));
    if (delay === 0) {
      options.warn(`worker ${pid} exited with ${how}: starting another`);
      this.fork();
      return;
    }
    options.warn(
      `worker ${pid} exited with ${how} ${uptime} ms after it started (fast crash ${this.fastCrashes} of ` +
        `${policy.maxFastCrashes}): starting another in ${delay} ms`,
    );
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      this.fork();
    }, delay);
    this.pending.add(timer);
  }

  private shutdownAll(code: number): void {
    this.exitCode = Math.max(this.exitCode, code);
    if (this.closing) return;
    this.closing = true;
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    if (this.alive.size === 0) {
      this.exit(this.exitCode);
      return;
    }
    for (const w of this.alive) {
      if (w.isConnected()) w.send({ type: 'bayou:shutdown' } satisfies WorkerMessage);
      else w.process.kill('SIGTERM');
    }
    const { shutdownTimeout } = this.options;
    const timer = setTimeout(() => {
      this.options.warn(`workers took longer than ${shutdownTimeout} ms to shut down: killing them`);
      for (const w of this.alive) w.process.kill('SIGKILL');
      this.exit(1);
    }, shutdownTimeout + 1000);
    timer.unref();
  }

  onSignal(signal: NodeJS.Signals): void {
    if (++this.signals > 1) {
      this.options.warn(`${signal} again: killing the workers without waiting`);
      for (const w of this.alive) w.process.kill('SIGKILL');
      this.exit(130);
      return;
    }
    this.options.say(
      `${signal}: shutting down ${this.listening.size} workers (send it again to exit at once)`,
    );
    this.shutdownAll(0);
  }
}

/** In a worker: tells the primary where it listens. */
export function reportListening(base: string): void {
  process.send?.({ type: 'bayou:listening', base } satisfies WorkerMessage);
}

/**
 * In a worker: hands its start-up failure's line to the primary, then calls `done` (once the
 * line is sent). False when there is no primary to tell.
 */
export function reportStartFailure(line: string, done: () => void): boolean {
  if (process.send === undefined || !process.connected) return false;
  process.send({ type: 'bayou:failed', line } satisfies WorkerMessage, undefined, {}, () => done());
  return true;
}

/** In a worker: calls `shutdown` when the primary asks for it. */
export function onPrimaryShutdown(shutdown: () => void): void {
  process.on('message', (m: unknown) => {
    if (isMessage(m) && m.type === 'bayou:shutdown') shutdown();
  });
}

export const isWorker = (): boolean => cluster.isWorker;
