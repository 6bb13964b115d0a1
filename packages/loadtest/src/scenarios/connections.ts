/**
 * Idle sessions: ramp up to `clients` sessions at `ramp` per second (each handshakes,
 * connects and subscribes to one channel — `/loadtest/idle`, or with `--channels N` channel
 * `/loadtest/idle/<i mod N>` — then stays idle), hold them for `hold`, and report the
 * connect rate and failures. The runner samples the server, the generator and the kernel at
 * both edges of the hold. With `--broadcast`, worker 0 then publishes one message to every
 * channel (250 to a frame) and each worker waits (up to `--drain`) until each of its sessions
 * got its channel's message: the slowest delivery is how long the broadcast took.
 */
import { openClients, type PartContext, type PartResult, sleep } from '../context.js';
import { rampGuard } from '../idle.js';
import { now } from '../stats.js';

export const IDLE_CHANNEL = '/loadtest/idle';
const BURST = 250;

/** The channel session `i` subscribes to. */
export function idleChannel(prefix: string, channels: number, i: number): string {
  return channels <= 1 ? `${prefix}${IDLE_CHANNEL}` : `${prefix}${IDLE_CHANNEL}/${i % channels}`;
}

export async function runConnections(ctx: PartContext): Promise<PartResult> {
  const { options: o, slice, driver, stats } = ctx;
  const perSecond = o.ramp / slice.workers;
  const channels = Math.max(1, o.channels);
  // Sessions of this worker subscribed to each channel: what the broadcast must reach.
  const members = new Uint32Array(channels);
  const setup = await openClients(
    ctx,
    async (i) => {
      await driver.open(i);
      await driver.subscribe(i, [idleChannel(o.channelPrefix, channels, i)]);
      members[i % channels]!++;
    },
    perSecond,
    rampGuard(o.minAvailable, o.maxRamp),
  );
  // The broadcast's publisher is one more session of worker 0, opened before the hold.
  const publisher = o.clients;
  if (o.broadcast && slice.worker === 0) await driver.open(publisher);
  await ctx.barrier('ready');
  // The window is the hold: the runner samples the server and the generator as it opens.
  ctx.onWindow('open');
  await sleep(o.hold);
  const rssBytes = process.memoryUsage().rss;
  ctx.onWindow('close');
  await ctx.barrier('held');
  const broadcast = o.broadcast ? await runBroadcast(ctx, members, publisher) : undefined;
  return {
    setup,
    stats: stats.toPart(),
    windowSeconds: o.hold / 1000,
    sessionsLost: 0,
    rssBytes,
    broadcast,
  };
}

/**
 * One message to every channel (message id = channel number, stamped with the publish
 * time), then waits until this worker's sessions all have theirs or `--drain` runs out.
 */
async function runBroadcast(
  ctx: PartContext,
  members: Uint32Array,
  publisher: number,
): Promise<{ expected: number; reached: number }> {
  const { options: o, slice, driver, stats } = ctx;
  for (let c = 0; c < members.length; c++) if (members[c]! > 0) stats.onSend(c, members[c]!);
  // Every worker registered what it expects; only worker 0 sends.
  stats.sent = 0;
  stats.openWindow(0);
  await ctx.barrier('expecting');
  if (slice.worker === 0) {
    const t = now().toFixed(3);
    const messages = Array.from(
      members,
      (_, c) => [idleChannel(o.channelPrefix, members.length, c), `{"i":${c},"t":${t}}`] as const,
    );
    // In frames of 250 messages (~25 KB): one frame of all 1,000 passes a server's 64 KiB limit.
    if (driver.publishBurst) {
      for (let k = 0; k < messages.length; k += BURST)
        driver.publishBurst(publisher, messages.slice(k, k + BURST));
    } else for (const [channel, data] of messages) driver.publish(publisher, channel, data);
    stats.sent = messages.length;
  }
  const deadline = performance.now() + Math.max(o.drain, 1000);
  while (stats.received < stats.expected && performance.now() < deadline) await sleep(10);
  stats.closeWindow();
  await ctx.barrier('broadcast');
  return { expected: stats.expected, reached: stats.received };
}
