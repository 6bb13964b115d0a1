/**
 * Idle sessions: ramp up to `clients` sessions at `ramp` per second (each handshakes,
 * connects and subscribes to one channel, then stays idle), hold them for `hold`, and
 * report the connect rate and failures. The runner samples the server's memory around it.
 */
import { openClients, type PartContext, type PartResult, sleep } from '../context.js';

export const IDLE_CHANNEL = '/loadtest/idle';

export async function runConnections(ctx: PartContext): Promise<PartResult> {
  const { options: o, slice, driver, stats } = ctx;
  const perSecond = o.ramp / slice.workers;
  const setup = await openClients(
    ctx,
    async (i) => {
      await driver.open(i);
      await driver.subscribe(i, [`${o.channelPrefix}${IDLE_CHANNEL}`]);
    },
    perSecond,
  );
  await ctx.barrier('ready');
  // The window is the hold: the runner samples server memory when it opens.
  ctx.onWindow('open');
  await sleep(o.hold);
  const rssBytes = process.memoryUsage().rss;
  ctx.onWindow('close');
  await ctx.barrier('held');
  return {
    setup,
    stats: stats.toPart(),
    windowSeconds: o.hold / 1000,
    sessionsLost: 0,
    rssBytes,
  };
}
