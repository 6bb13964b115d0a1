/**
 * The chat scenario's batch publishers (`--publishers session|api`): each send is a batch
 * of `batchSize` messages, each to a random room, stamped with one send time — from one
 * extra session of this worker in one WebSocket frame (the shape of a market-data feed),
 * or as one `POST /api/publish` of a Bayou server (a backend).
 */
import type { PartContext } from '../context.js';

/** Builds one batch's `[channel, dataJson]` pairs, counting each message as sent. */
export type BatchBuilder = (sentAt: number) => [string, string][];

/** The send function of a batch publisher; opens its session first (`session`). */
export async function batchPublisher(
  ctx: PartContext,
  build: BatchBuilder,
): Promise<(sentAt: number) => void> {
  const { options: o, slice, driver } = ctx;
  if (o.publishers === 'session') {
    const publisher = o.clients + slice.worker;
    await driver.open(publisher);
    if (driver.publishBurst === undefined)
      throw new Error('--publishers session needs --transport websocket');
    const burst = driver.publishBurst.bind(driver);
    return (sentAt) => burst(publisher, build(sentAt));
  }
  const url = new URL(o.url.replace(/^ws/, 'http'));
  url.pathname = '/api/publish';
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${o.apiKey}` };
  return (sentAt) => {
    const body = JSON.stringify(
      build(sentAt).map(([channel, data]) => ({ channel, data: JSON.parse(data) })),
    );
    // A refused batch is never delivered: the report counts its messages lost.
    void fetch(url, { method: 'POST', headers, body })
      .then((r) => r.arrayBuffer())
      .catch(() => undefined);
  };
}
