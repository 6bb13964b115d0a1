/**
 * The publishing schedule shared by chat and feed: batches with a pause, an open loop at a
 * fixed rate (each message stamped with its intended send time, so a stalled generator or
 * server shows up as latency instead of being hidden: no coordinated omission), or a
 * closed loop bounded by outstanding deliveries. Also opens and closes the measured window.
 */
import { type PartContext, sleep } from '../context.js';
import { now } from '../stats.js';

export interface PublishPlan {
  /** Publishes one message stamped `sentAt`. */
  send: (sentAt: number) => void;
  /** Messages to send when --duration is 0. */
  total: number;
  /** Open loop when > 0. */
  ratePerSecond: number;
  batch: number;
  batchPause: number;
}

export interface PublishWindow {
  seconds: number;
  aborted?: string;
}

/** Polling period of the open and closed loops: one shared timer, cheap next to the traffic. */
const TICK_MS = 1;
/** How often the quiet window (nothing to publish) checks its end and --max-latency. */
const QUIET_POLL_MS = 10;

export async function runPublisher(ctx: PartContext, plan: PublishPlan): Promise<PublishWindow> {
  const { options: o, stats } = ctx;
  const start = now();
  const endAt = o.duration > 0 ? start + o.warmup + o.duration : Number.POSITIVE_INFINITY;
  let sent = 0;
  let windowAt = 0;
  const openWindow = () => {
    windowAt = now();
    stats.openWindow(windowAt);
    ctx.onWindow('open');
  };
  const warmupTimer = o.warmup > 0 ? setTimeout(openWindow, o.warmup) : undefined;
  if (o.warmup === 0) openWindow();
  const done = () => stats.latencyExceeded || (o.duration > 0 ? now() >= endAt : sent >= plan.total);
  const sendOne = (sentAt: number) => {
    plan.send(sentAt);
    sent++;
  };
  if (plan.ratePerSecond > 0) await openLoop(plan, sendOne, done, start);
  else if (o.maxOutstanding > 0) await closedLoop(ctx, sendOne, done);
  else await batches(plan, sendOne, done);
  clearTimeout(warmupTimer);
  const end = now();
  if (windowAt === 0) openWindow();
  stats.closeWindow();
  ctx.onWindow('close');
  const aborted = stats.latencyExceeded ? `latency above --max-latency ${o.maxLatency}ms` : undefined;
  return { seconds: Math.max(0.001, (end - windowAt) / 1000), aborted };
}

async function openLoop(plan: PublishPlan, send: (t: number) => void, done: () => boolean, start: number) {
  const interval = 1000 / plan.ratePerSecond;
  let n = 0;
  while (!done()) {
    const due = Math.floor((now() - start) / interval);
    while (n <= due && !done()) send(start + n++ * interval);
    await sleep(TICK_MS);
  }
}

async function closedLoop(ctx: PartContext, send: (t: number) => void, done: () => boolean) {
  const { stats, options } = ctx;
  while (!done()) {
    while (stats.expected - stats.received < options.maxOutstanding && !done()) send(now());
    await sleep(TICK_MS);
  }
}

async function batches(plan: PublishPlan, send: (t: number) => void, done: () => boolean) {
  while (!done()) {
    for (let i = 0; i < plan.batch && !done(); i++) send(now());
    if (plan.batchPause > 0) await sleep(plan.batchPause);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * The measured window when the generator publishes nothing (feed --source demo): --warmup,
 * then `duration`, ending early when a latency passes --max-latency.
 */
export async function runQuietWindow(ctx: PartContext, duration: number): Promise<PublishWindow> {
  const { options: o, stats } = ctx;
  const warmupEnd = now() + o.warmup;
  while (!stats.latencyExceeded && now() < warmupEnd) await sleep(QUIET_POLL_MS);
  const windowAt = now();
  stats.openWindow(windowAt);
  ctx.onWindow('open');
  while (!stats.latencyExceeded && now() < windowAt + duration) await sleep(QUIET_POLL_MS);
  const end = now();
  stats.closeWindow();
  ctx.onWindow('close');
  const aborted = stats.latencyExceeded ? `latency above --max-latency ${o.maxLatency}ms` : undefined;
  return { seconds: Math.max(0.001, (end - windowAt) / 1000), aborted };
}
