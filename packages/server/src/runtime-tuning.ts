/**
 * V8 settings `bayou start` applies to its own process, and those it starts its cluster
 * workers with.
 *
 * **The workers' young generation is small.** V8 lets a process's young generation grow
 * to two 16 MB semi-spaces, and the pages it touched stay resident: an empty worker held
 * ~45 MB of anonymous memory, ~10 MB of it young generation, more once sessions came in.
 * With the ~30 workers a 512,000-session run needs, that is hundreds of MB spent on
 * nothing. `bayou start --workers N` forks its workers with `--max-semi-space-size=4`
 * (`workerExecArgv`): 1 MB saved a few MB more but cost long-polling ~1.5x the CPU per
 * message (objects of held polls promoted early); 4 MB left WebSocket and long-polling
 * within the bench's spread. Figures in the server README (Idle cost). A process started
 * with its own `--max-semi-space-size` (command line or `NODE_OPTIONS`) passes it on.
 *
 * **The workers' malloc keeps less.** glibc gives each thread that allocates its own arena
 * (V8's compiler and GC threads, libuv's pool), and what a thread freed stays in its arena;
 * it also raises its mmap threshold to the largest block freed so far, after which such
 * blocks come from the heap and stay there once freed. An idle worker held 16–17 MB in
 * malloc's heaps with 5,000 sessions; with one arena and the threshold fixed at its
 * initial 128 KiB (`MALLOC_ARENA_MAX=1`, `MALLOC_MMAP_THRESHOLD_=131072`, `workerEnv`)
 * 11 MB, and the worker's RSS 6 MB less. A process started with its own `MALLOC_*` or
 * `glibc.malloc` tunables passes them on instead.
 *
 * **No allocation-site pretenuring.** V8 watches where objects are allocated and, when
 * nearly all objects of one site survive a young-generation collection, allocates that
 * site's objects straight into the old generation from then on. A Bayeux server meets
 * that rule at the worst time: while its clients connect, every long-poll (its request,
 * response and header objects) is held, so those sites are judged long-lived and stay so.
 * Afterwards each long-poll's objects, which live milliseconds, fill the old generation
 * and cost full collections. Measured with 1,000 browser-like long-polling clients at
 * 20,000 delivered messages/s: 165–233 MB promoted per 6 s run with pretenuring, 34–42 MB
 * without (the raw `node:http` floor: 20–23 MB), garbage-collection pauses halved, and
 * server CPU per long-poll response down from about 56–59 µs to 46–49 µs; WebSocket CPU
 * per message unchanged. A process started with an explicit `--allocation-site-pretenuring`
 * keeps it.
 */
import { setFlagsFromString } from 'node:v8';

const PRETENURING = '--allocation-site-pretenuring';
const SEMI_SPACE = '--max-semi-space-size';
/** The workers' largest semi-space, in MB (V8's default on 64-bit: 16). */
export const WORKER_SEMI_SPACE_MB = 4;
const NO_PRETENURING = '--no-allocation-site-pretenuring';

function givenFlags(execArgv: readonly string[], nodeOptions: string): string[] {
  return [...execArgv, ...nodeOptions.split(/\s+/)];
}

/**
 * The `execArgv` cluster workers are forked with: this process's own, plus a small
 * young generation unless the process was started with its own `--max-semi-space-size`.
 */
export function workerExecArgv(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] {
  const given = givenFlags(execArgv, nodeOptions);
  // V8 takes either spelling: --max-semi-space-size or --max_semi_space_size.
  const named = (a: string): boolean => {
    const flag = a.replace(/_/g, '-');
    return flag === SEMI_SPACE || flag.startsWith(`${SEMI_SPACE}=`);
  };
  if (given.some(named)) return [...execArgv];
  return [...execArgv, `${SEMI_SPACE}=${WORKER_SEMI_SPACE_MB}`];
}

/** The glibc malloc settings the workers are forked with (see above). */
export const WORKER_MALLOC_ENV: Readonly<Record<string, string>> = Object.freeze({
  MALLOC_ARENA_MAX: '1',
  MALLOC_MMAP_THRESHOLD_: '131072',
});

/**
 * What to add to the environment cluster workers are forked with: `WORKER_MALLOC_ENV`,
 * unless this process's environment sets malloc's behaviour itself (a `MALLOC_*` variable
 * or `glibc.malloc` tunables in `GLIBC_TUNABLES`), which then reaches the workers as is.
 */
export function workerEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const own = Object.keys(env).some((k) => k.startsWith('MALLOC_'));
  if (own || env.GLIBC_TUNABLES?.includes('glibc.malloc.')) return {};
  return { ...WORKER_MALLOC_ENV };
}

/** The Node options and environment `bayou start --workers` forks its workers with. */
export function workerForkOptions(): { execArgv: string[]; env: Record<string, string> } {
  return { execArgv: workerExecArgv(), env: workerEnv() };
}

/**
 * Applies the settings above unless the process was started with its own choice
 * (`execArgv` or `NODE_OPTIONS` naming the flag). Returns the flags it set.
 */
export function tuneRuntime(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] {
  const given = givenFlags(execArgv, nodeOptions);
  if (given.some((a) => a === PRETENURING || a === NO_PRETENURING)) return [];
  setFlagsFromString(NO_PRETENURING);
  return [NO_PRETENURING];
}
