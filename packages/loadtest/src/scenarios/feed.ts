/**
 * The Liberator-style feed: `subjects` subjects, each updated `rate` times a second; every
 * client watches `subjectsPerClient` random subjects. Two sources of updates:
 * - `publisher` (default): a publisher session of the driver itself (one per worker,
 *   publishing the subjects n with n % workers == worker) on channels /feed/<n>; any Bayeux
 *   server works, and every update carries the id used to count loss exactly;
 * - `demo`: a Bayou server's demo feed (a record provider) produces /demo/prices/<SYMBOL>;
 *   the driver publishes nothing and checks snapshots and deltas (see demo-feed.ts).
 */
import {
  assignGroups,
  drain,
  groupSizes,
  openClients,
  type PartContext,
  type PartResult,
  padding,
  partResult,
  sleep,
} from '../context.js';
import { runPublisher, runQuietWindow } from './publish-loop.js';

/** Updates per second per subject when --rate is 0. */
export const DEFAULT_FEED_RATE = 10;
/** Publishing time when --duration is 0. */
export const DEFAULT_FEED_DURATION = 10_000;

export async function runFeed(ctx: PartContext): Promise<PartResult> {
  if (ctx.options.source === 'demo') return runDemoFeed(ctx);
  const { options: o, slice, driver, stats } = ctx;
  const watched = assignGroups(o.clients, o.subjects, o.subjectsPerClient, o.seed);
  const sizes = groupSizes(watched, o.subjects);
  const channel = `${o.channelPrefix}/feed/`;
  const setup = await openClients(ctx, async (i) => {
    await driver.open(i);
    await driver.subscribe(
      i,
      Array.from(watched[i]!, (s) => `${channel}${s}`),
    );
  });
  const publisher = o.clients + slice.worker;
  await driver.open(publisher);
  await ctx.barrier('ready');
  const mine: number[] = [];
  for (let s = slice.worker; s < o.subjects; s += slice.workers) mine.push(s);
  const pad = padding(o.messageSize);
  const rate = o.rate > 0 ? o.rate : DEFAULT_FEED_RATE;
  let seq = 0;
  const send = (sentAt: number) => {
    const subject = mine[seq % mine.length]!;
    const id = seq++ * slice.workers + slice.worker;
    stats.onSend(id, sizes[subject]!);
    driver.publish(publisher, `${channel}${subject}`, `{"i":${id},"t":${sentAt.toFixed(3)},"p":"${pad}"}`);
  };
  const window = await runPublisher(
    { ...ctx, options: { ...o, duration: o.duration > 0 ? o.duration : DEFAULT_FEED_DURATION } },
    { send, total: Number.POSITIVE_INFINITY, ratePerSecond: rate * mine.length, batch: 1, batchPause: 0 },
  );
  await ctx.barrier('published');
  await drain(ctx);
  await ctx.barrier('drained');
  return partResult(ctx, setup, window);
}

/** feed --source demo: subscribe, watch for --warmup + --duration, then check the snapshots. */
async function runDemoFeed(ctx: PartContext): Promise<PartResult> {
  const { options: o, driver, demo } = ctx;
  if (!demo) throw new Error('feed --source demo runs without its record accounting');
  const setup = await openClients(ctx, async (i) => {
    await driver.open(i);
    await driver.subscribe(i, demo.channelsOf(i));
    demo.markSubscribed(i);
  });
  await ctx.barrier('ready');
  const window = await runQuietWindow(ctx, o.duration > 0 ? o.duration : DEFAULT_FEED_DURATION);
  await ctx.barrier('published');
  // A snapshot still missing may be late: wait up to --drain for it before counting it missing.
  const deadline = performance.now() + o.drain;
  while (demo.missingSnapshots() > 0 && performance.now() < deadline) await sleep(50);
  await ctx.barrier('drained');
  return { ...partResult(ctx, setup, window), demoFeed: demo.toPart() };
}
