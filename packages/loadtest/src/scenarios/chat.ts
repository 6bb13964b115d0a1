/**
 * The CometD benchmark's chat: every client joins `roomsPerClient` random rooms; messages
 * go from a random client to a random one of its rooms and reach every member. Three ways
 * to publish: batches with a pause (the CometD default), an open loop at `rate` messages/s
 * timestamped at the intended send time, or a closed loop that keeps at most
 * `maxOutstanding` deliveries in flight (saturation). `--publishers session|api` sends each
 * batch from one session in one frame, or as one publish API request (`chat-publishers.ts`).
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
  seededRandom,
} from '../context.js';
import { batchPublisher } from './chat-publishers.js';
import { runPublisher } from './publish-loop.js';

export async function runChat(ctx: PartContext): Promise<PartResult> {
  const { options: o, slice, driver, stats } = ctx;
  const rooms = assignGroups(o.clients, o.rooms, o.roomsPerClient, o.seed);
  const sizes = groupSizes(rooms, o.rooms);
  const channel = `${o.channelPrefix}/chat/`;
  const setup = await openClients(ctx, async (i) => {
    await driver.open(i);
    await driver.subscribe(
      i,
      Array.from(rooms[i]!, (r) => `${channel}${r}`),
    );
  });
  await ctx.barrier('ready');
  // Senders are this worker's clients; the random choice differs per worker.
  const rnd = seededRandom(o.seed * 7919 + slice.worker + 1);
  const pad = padding(o.messageSize);
  let seq = 0;
  const send = (sentAt: number) => {
    const sender = slice.lo + Math.floor(rnd() * (slice.hi - slice.lo));
    const mine = rooms[sender]!;
    const room = mine[Math.floor(rnd() * mine.length)]!;
    const id = seq++ * slice.workers + slice.worker;
    stats.onSend(id, sizes[room]!);
    driver.publish(sender, `${channel}${room}`, `{"i":${id},"t":${sentAt.toFixed(3)},"p":"${pad}"}`);
  };
  const window =
    o.publishers === 'clients'
      ? await runPublisher(ctx, {
          send,
          total: Math.ceil((o.batches * o.batchSize) / slice.workers),
          ratePerSecond: o.rate / slice.workers,
          batch: o.batchSize,
          batchPause: o.pause,
        })
      : await runPublisher(ctx, {
          // Each send is a whole batch (one frame, one request), stamped with one time.
          send: await batchPublisher(ctx, (sentAt) => {
            const batch: [string, string][] = [];
            for (let k = 0; k < o.batchSize; k++) {
              const room = Math.floor(rnd() * o.rooms);
              const id = seq++ * slice.workers + slice.worker;
              stats.onSend(id, sizes[room]!);
              batch.push([`${channel}${room}`, `{"i":${id},"t":${sentAt.toFixed(3)},"p":"${pad}"}`]);
            }
            return batch;
          }),
          total: Math.ceil(o.batches / slice.workers),
          ratePerSecond: o.rate / o.batchSize / slice.workers,
          batch: 1,
          batchPause: o.pause,
        });
  await ctx.barrier('published');
  await drain(ctx);
  await ctx.barrier('drained');
  return partResult(ctx, setup, window);
}
