// @ts-check
// Part `commands` of the cluster bench: Redis commands per published message against the
// number of nodes and subscribers (INFO commandstats, the nodes' heartbeats measured while
// idle and subtracted). Subscribers and the publisher are the load tester's own WebSocket
// driver (src/bayeux-ws-driver.ts), one driver per node.
import { bayeuxWebSocket } from '../dist/index.js';
import { commandStats, diff, startNodes, total } from './cluster-processes.mjs';

/** @import { Driver } from '../dist/index.js' */
/** @import { BenchRedis } from './cluster-processes.mjs' */

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Publishes go out this many at a time (in one event-loop turn), the next batch once the last is delivered. */
const BATCH = 10;

/**
 * @typedef {object} CommandsRow
 * @property {number} nodes
 * @property {number} subscribers
 * @property {number} perPublish Redis commands per published message, heartbeats subtracted
 * @property {Record<string, number>} byCommand the commands called at least once per two publishes, per publish
 * @property {number} missing deliveries that never came, counted per message
 */

/**
 * `subscribers` WebSocket clients spread over `nodeCount` nodes on `redis`, subscribed to one
 * channel; a client of the first node publishes `publishes` messages on it.
 * @param {number} nodeCount
 * @param {number} subscribers
 * @param {BenchRedis} redis
 * @param {number} publishes
 * @returns {Promise<CommandsRow>}
 */
export async function commandsPerPublish(nodeCount, subscribers, redis, publishes) {
  const nodes = await startNodes(nodeCount, redis);
  const channel = '/bench/room/a';
  /** Deliveries per published message (its payload's id). */
  const deliveries = new Array(publishes).fill(0);
  let delivered = 0;
  /** @type {(id: number) => void} */
  const sink = (id) => {
    deliveries[id]++;
    delivered++;
  };
  /** @type {Driver[]} */
  const drivers = nodes.map((n) => bayeuxWebSocket({ url: n.url, localAddresses: [], sink }));
  try {
    const opened = [];
    for (let i = 0; i < subscribers; i++) {
      const driver = /** @type {Driver} */ (drivers[i % drivers.length]);
      opened.push(driver.open(i).then(() => driver.subscribe(i, [channel])));
    }
    await Promise.all(opened);
    // The publisher: one more client of the first node, subscribed to nothing.
    const publisher = /** @type {Driver} */ (drivers[0]);
    await publisher.open(subscribers);
    // Background (heartbeats) over an idle second.
    const idle0 = total(await commandStats(redis.port));
    const t0 = Date.now();
    await sleep(1000);
    const idle1 = total(await commandStats(redis.port));
    const backgroundPerMs = (idle1 - idle0 - 1) / (Date.now() - t0); // minus the INFO itself
    const before = await commandStats(redis.port);
    const start = Date.now();
    const deadline = start + 10_000 + publishes * 20;
    for (let sent = 0; sent < publishes; ) {
      for (const end = Math.min(publishes, sent + BATCH); sent < end; sent++)
        publisher.publish(subscribers, channel, `{"i":${sent},"t":${Date.now()}}`);
      while (delivered < sent * subscribers && Date.now() < deadline) await sleep(1);
    }
    const calls = diff(await commandStats(redis.port), before);
    const elapsed = Date.now() - start;
    const background = backgroundPerMs * elapsed;
    return {
      nodes: nodeCount,
      subscribers,
      perPublish: (total(calls) - background - 1) / publishes,
      byCommand: Object.fromEntries(
        Object.entries(calls)
          .filter(([, v]) => v >= publishes / 2)
          .map(([k, v]) => [k, Math.round((v / publishes) * 100) / 100]),
      ),
      missing: deliveries.reduce((a, n) => a + Math.max(0, subscribers - n), 0),
    };
  } finally {
    for (const d of drivers) await d.close();
    for (const n of nodes) await n.stop();
  }
}
