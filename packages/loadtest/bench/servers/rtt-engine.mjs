// @ts-check
// Bench only (`--engines memory-rtt` of the engines bench): the memory engine behind an
// external broker that does no work at all. The publishes of one event-loop turn leave in
// one `PING` to a redis-server at the turn's end (as the Redis engine corks its publishes
// per turn), and are handed to the memory engine, in order, when the `+PONG` comes back.
// So the node waits for one broker acknowledgement per turn, as any broker-backed engine
// must, and pays nothing else: no script, no pub/sub copy, no ioredis. The CPU it adds to
// the memory engine is the floor of waiting for a broker on this machine. With `busy` > 0
// (`memory-rtt-busy`) the round trip is an EVAL of a Lua loop of that many iterations
// instead: a broker that burns CPU per turn as the Redis engine's script does, but still
// touches no data, to tell the broker's own work on the shared cores from the node's.
/** The Lua loop of `memory-rtt-busy`, as a RESP command. @param {number} n */
const busyCommand = (n) => {
  const script = `local x = 0 for i = 1, ${n} do x = x + i end return 0`;
  return `*3\r\n$4\r\nEVAL\r\n$${script.length}\r\n${script}\r\n$1\r\n0\r\n`;
};

import { createConnection } from 'node:net';

/** @import { Broker, Engine, HistoryPolicy, StreamPosition } from '@bayou/server' */

/**
 * A publication waiting for its turn's acknowledgement.
 * @typedef {{ channel: string, payload: string, history: HistoryPolicy, trace: string | undefined, resolve: (p: StreamPosition | null | PromiseLike<StreamPosition | null>) => void, reject: (e: unknown) => void }} Waiting
 */

/**
 * `memory` (a started-later MemoryEngine) whose broker waits for one round trip to the
 * redis-server at `url` per turn of publishes.
 * @param {Engine} memory
 * @param {string} url `redis://host:port`
 * @param {number} [busy] iterations of a Lua loop per round trip (0: a PING)
 * @returns {Promise<Engine>}
 */
export async function withBrokerRoundTrip(memory, url, busy = 0) {
  const command = busy > 0 ? busyCommand(busy) : 'PING\r\n';
  const { hostname, port } = new URL(url);
  const socket = createConnection({ host: hostname, port: Number(port) });
  socket.setNoDelay(true);
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  /** Publications of this turn (null: none yet). @type {Waiting[] | null} */
  let turn = null;
  /** Turns sent and not acknowledged, oldest first. @type {Waiting[][]} */
  const inFlight = [];
  let partial = '';
  const endTurn = () => {
    if (turn === null) return;
    inFlight.push(turn);
    turn = null;
    socket.write(command);
  };
  socket.on('data', (chunk) => {
    partial += chunk.toString('latin1');
    let end = partial.indexOf('\r\n');
    while (end >= 0) {
      partial = partial.slice(end + 2);
      const batch = inFlight.shift() ?? [];
      for (const w of batch) {
        try {
          w.resolve(memory.broker.publish(w.channel, w.payload, w.history, w.trace));
        } catch (e) {
          w.reject(e);
        }
      }
      end = partial.indexOf('\r\n');
    }
  });
  const failAll = () => {
    for (const batch of inFlight.splice(0))
      for (const w of batch) w.reject(new Error('the bench broker went away'));
  };
  socket.on('error', failAll);
  socket.on('close', failAll);

  /** @type {Broker} */
  const broker = {
    publish(channel, payload, history, trace) {
      return new Promise((resolve, reject) => {
        if (turn === null) {
          turn = [];
          setImmediate(endTurn);
        }
        turn.push({ channel, payload, history, trace, resolve, reject });
      });
    },
    publishRecord: (subject, fields) => memory.broker.publishRecord(subject, fields),
    recordImage: (subject) => memory.broker.recordImage(subject),
    dropRecord: (subject) => memory.broker.dropRecord(subject),
    subscribe: (name) => memory.broker.subscribe(name),
    unsubscribe: (name) => memory.broker.unsubscribe(name),
  };
  return {
    capabilities: memory.capabilities,
    broker,
    history: memory.history,
    presence: memory.presence,
    directory: memory.directory,
    leases: memory.leases,
    historyStats: () => memory.historyStats?.() ?? { channels: 0, expired: 0, evicted: 0 },
    start: (node) => memory.start(node),
    ready: () => memory.ready(),
    close: async () => {
      socket.destroy();
      await memory.close();
    },
  };
}
