#!/usr/bin/env node
// @ts-check
// Bandwidth benchmark: deltas (`ext.delta` on subscribe) and permessage-deflate
// (`--compression`) on the feeds of feeds.mjs (price, chat, ticker), over raw WebSocket
// clients, the server `bayou start` in a child process (a fresh one per row).
// For each mode it reports the bytes on the wire per delivered message (subscribers'
// sockets, both directions), the server CPU per delivered message at a fixed 20,000
// deliveries/s and at saturation (closed loop), messages per frame and the server's RSS, and
// for the idle part the RSS per idle session (10,000 sessions, each handshaken and
// subscribed) with compression off and on (clients compressing everything they send, as
// browsers do). With BAYOU_BASELINE=<dir of an older packages/server> the plain rows and the
// idle part run on that build too; with --builds label=dir,... every mode runs on those too.
//
// Modes (--modes, comma-separated): plain, delta, deflate, delta+deflate, each optionally
// with @<threshold> (--compression-threshold) and +acks (clients asking for numbered frames
// and reporting them as @bayou/client does: its default path). With --rounds N every row
// runs N times, interleaved, and the summary takes medians. BAYOU_BENCH_FLAGS adds server
// flags; BAYOU_BENCH_NODE_ARGS node flags (--cpu-prof: the server then ends on SIGTERM).
//
//   node packages/server/bench/bandwidth.mjs [--quick] [--clients 100] [--seconds 5] [--idle 10000]
//     [--rounds 1] [--feeds price,chat] [--modes plain,delta,deflate,delta+deflate]
//     [--builds label=dir,...] [--no-idle] [--no-saturation]
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { cpuSeconds, rss, startServer } from './bench-server.mjs';
import { FEED_MAKERS, priceFeed, random, reseed } from './feeds.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    clients: { type: 'string' },
    seconds: { type: 'string' },
    idle: { type: 'string' },
    rounds: { type: 'string' },
    feeds: { type: 'string' },
    modes: { type: 'string' },
    'no-idle': { type: 'boolean' },
    'no-saturation': { type: 'boolean' },
    'only-idle': { type: 'boolean' },
    builds: { type: 'string' },
  },
});
const quick = values.quick === true;
const CLIENTS = Number(values.clients ?? (quick ? 40 : 100));
const SECONDS = Number(values.seconds ?? (quick ? 2 : 5));
const IDLE = Number(values.idle ?? (quick ? 1000 : 10_000));
const ROUNDS = Number(values.rounds ?? 1);
const FEEDS = (values.feeds ?? 'price,chat').split(',');
const FIXED_RATE = 20_000;
const OUTSTANDING = 5000;
/** Idle sessions opened at once. */
const IDLE_WAVE = 100;
const TICK = 10;

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------
// Server

// ---------------------------------------------------------------------------------------
// Clients

/** @typedef {{ ws: WebSocket, clientId: string, socket: import('node:net').Socket }} Client */

/** ms between a numbered frame with deliveries and its report, and the deliveries that report at once (`@bayou/client`'s). */
const REPORT_DELAY = 1000;
const REPORT_AFTER = 1000;

/**
 * A raw Bayeux client: handshake, a first connect, then `subscribe` (with `ext.delta` when
 * `delta`); `onMessage` gets every non-meta message, `onFrame` every frame. With `acks` it
 * asks for numbered frames (`ext.ack`, `ext.bayou.ackFrames`) and reports them as
 * `@bayou/client` does: a connect with `ext.ackFrames` a second after a frame with
 * deliveries, or at once after 1,000 deliveries.
 * @param {string} url
 * @param {{ deflate: boolean, deflateAll?: boolean, delta: boolean, acks?: boolean, channels: string[], onMessage: (m: any) => void, onFrame?: () => void }} o
 * @returns {Promise<Client>}
 */
function openClient(url, o) {
  const ws = new WebSocket(url, {
    perMessageDeflate: o.deflate ? { threshold: o.deflateAll ? 0 : 1024 } : false,
  });
  return new Promise((resolveOpen, reject) => {
    ws.once('error', reject);
    let clientId = '';
    let batch = 0;
    let unreported = 0;
    let delivered = 0;
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    /** Connect replies still to come for connects superseded by a report (not answered again). */
    let superseded = 0;
    const report = () => {
      clearTimeout(timer);
      timer = undefined;
      unreported = 0;
      if (ws.readyState !== WebSocket.OPEN) return;
      superseded++;
      ws.send(
        JSON.stringify([
          { channel: '/meta/connect', clientId, connectionType: 'websocket', ext: { ackFrames: batch } },
        ]),
      );
    };
    ws.on('close', () => clearTimeout(timer));
    ws.on('open', () =>
      ws.send(
        JSON.stringify([
          {
            channel: '/meta/handshake',
            version: '1.0',
            supportedConnectionTypes: ['websocket'],
            ...(o.acks ? { ext: { ack: true, bayou: { ackFrames: true } } } : {}),
          },
        ]),
      ),
    );
    ws.on('message', (raw) => {
      o.onFrame?.();
      for (const m of JSON.parse(raw.toString())) {
        if (m.channel === '/meta/ack') {
          batch = Math.max(batch, m.ext?.ack ?? 0);
          if (delivered === 0) continue;
          unreported += delivered;
          delivered = 0;
          if (unreported >= REPORT_AFTER) report();
          else timer ??= setTimeout(report, REPORT_DELAY);
        } else if (m.channel === '/meta/handshake') {
          clientId = m.clientId;
          ws.send(
            JSON.stringify([
              { channel: '/meta/connect', clientId, connectionType: 'websocket', advice: { timeout: 0 } },
              {
                channel: '/meta/subscribe',
                clientId,
                subscription: o.channels,
                id: 's',
                ...(o.delta ? { ext: { delta: 'merge-patch' } } : {}),
              },
            ]),
          );
        } else if (m.channel === '/meta/connect') {
          if (superseded > 0) superseded--;
          else if (m.successful)
            ws.send(JSON.stringify([{ channel: '/meta/connect', clientId, connectionType: 'websocket' }]));
        } else if (m.channel === '/meta/subscribe') {
          if (!m.successful) {
            ws.terminate();
            reject(new Error(`subscribe refused: ${m.error}`));
          } else resolveOpen({ ws, clientId, socket: /** @type {any} */ (ws)._socket });
        } else if (!m.channel.startsWith('/meta/')) {
          delivered++;
          o.onMessage(m);
        }
      }
    });
  });
}

/** @param {Client[]} clients bytes both ways on their sockets so far. */
const wireBytes = (clients) =>
  clients.reduce((sum, c) => sum + c.socket.bytesRead + c.socket.bytesWritten, 0);

// ---------------------------------------------------------------------------------------
// One row: a feed in a mode

/**
 * @param {string} serverDir
 * @param {import('./feeds.mjs').Feed} feed
 * @param {{ delta: boolean, deflate: boolean, threshold?: string, acks?: boolean }} mode
 */
async function runRow(serverDir, feed, mode) {
  const flags = mode.deflate ? ['--compression'] : [];
  if (mode.deflate && mode.threshold !== undefined) flags.push('--compression-threshold', mode.threshold);
  const server = await startServer(serverDir, flags);
  try {
    let delivered = 0;
    let deltas = 0;
    let frames = 0;
    const onFrame = () => {
      frames++;
    };
    const onMessage = (/** @type {any} */ m) => {
      delivered++;
      if (m.ext?.delta?.from !== undefined) deltas++;
    };
    /** Subscribers of each channel: what each publication is owed. */
    const fanout = new Map(feed.channels.map((c) => [c, 0]));
    /** @type {Client[]} */
    const clients = [];
    for (let i = 0; i < CLIENTS; i++) {
      const picked = new Set();
      while (picked.size < feed.perClient)
        picked.add(feed.channels[Math.floor(random() * feed.channels.length)]);
      for (const c of picked) fanout.set(c, (fanout.get(c) ?? 0) + 1);
      clients.push(await openClient(server.url, { ...mode, channels: [...picked], onMessage, onFrame }));
    }
    const publisher = await openClient(server.url, {
      deflate: false,
      delta: false,
      channels: ['/unused'],
      onMessage: () => {},
    });
    const watched = feed.channels.filter((c) => (fanout.get(c) ?? 0) > 0);
    let owed = 0;
    let n = 0;
    /** Publishes `count` messages in one frame, round the watched channels. */
    const publish = (/** @type {number} */ count) => {
      const batch = [];
      for (let i = 0; i < count; i++) {
        const channel = /** @type {string} */ (watched[n++ % watched.length]);
        owed += fanout.get(channel) ?? 0;
        batch.push({
          channel,
          clientId: publisher.clientId,
          data: feed.next(Number(channel.slice(channel.lastIndexOf('/') + 1))),
        });
      }
      publisher.ws.send(JSON.stringify(batch));
    };
    const fanoutMean = [...fanout.values()].reduce((a, b) => a + b, 0) / feed.channels.length;

    /** Publishes at a fixed rate of deliveries for `seconds`. */
    const fixed = async (/** @type {number} */ seconds) => {
      const perTick = Math.max(1, Math.round((FIXED_RATE / fanoutMean) * (TICK / 1000)));
      const start = performance.now();
      let ticks = 0;
      while (performance.now() - start < seconds * 1000) {
        publish(perTick);
        ticks++;
        const wait = start + ticks * TICK - performance.now();
        if (wait > 0) await sleep(wait);
      }
    };
    /** Keeps at most OUTSTANDING deliveries owed for `seconds`. */
    const saturate = async (/** @type {number} */ seconds) => {
      const start = performance.now();
      while (performance.now() - start < seconds * 1000) {
        if (owed - delivered < OUTSTANDING) publish(20);
        else await sleep(1);
        if (n % 200 === 0) await new Promise(setImmediate);
      }
    };
    const measure = async (/** @type {() => Promise<void>} */ load) => {
      const [d0, c0, b0, t0, x0, f0] = [
        delivered,
        cpuSeconds(server.pid),
        wireBytes(clients),
        performance.now(),
        deltas,
        frames,
      ];
      await load();
      const [d1, c1, b1, t1, x1, f1] = [
        delivered,
        cpuSeconds(server.pid),
        wireBytes(clients),
        performance.now(),
        deltas,
        frames,
      ];
      const count = d1 - d0;
      return {
        rate: Math.round(count / ((t1 - t0) / 1000)),
        cpuUs: ((c1 - c0) * 1e6) / count,
        bytes: (b1 - b0) / count,
        deltaShare: (x1 - x0) / count,
        perFrame: count / Math.max(1, f1 - f0),
      };
    };
    // Warm-up: every watched channel published once (each subscriber has its first, whole
    // message: its base), then a second at the fixed rate.
    for (let i = 0; i < watched.length; i += 50) {
      publish(Math.min(50, watched.length - i));
      while (owed - delivered > OUTSTANDING) await sleep(1);
    }
    const until = Date.now() + 10_000;
    while (delivered < owed && Date.now() < until) await sleep(5);
    await fixed(1);
    const atRate = await measure(() => fixed(SECONDS));
    const atSaturation = values['no-saturation'] === true ? atRate : await measure(() => saturate(SECONDS));
    const serverRss = rss(server.pid);
    for (const c of [...clients, publisher]) c.ws.terminate();
    return { atRate, atSaturation, fanout: fanoutMean, rss: serverRss };
  } finally {
    server.stop();
  }
}

/**
 * RSS per idle session: IDLE clients handshaken and subscribed to one channel.
 * @param {string} serverDir
 * @param {boolean} deflate
 */
async function idleRow(serverDir, deflate) {
  const server = await startServer(serverDir, deflate ? ['--compression'] : []);
  const clients = [];
  let failed = 0;
  let retried = 0;
  try {
    await sleep(500);
    const before = rss(server.pid);
    for (let i = 0; i < IDLE; i += IDLE_WAVE) {
      const wave = [];
      for (let j = i; j < Math.min(IDLE, i + IDLE_WAVE); j++)
        wave.push(
          (async () => {
            // A session refused on its first connect handshakes again, as its advice says.
            for (let attempt = 1; ; attempt++) {
              try {
                return await openClient(server.url, {
                  deflate,
                  deflateAll: true,
                  delta: false,
                  channels: ['/idle'],
                  onMessage: () => {},
                });
              } catch (e) {
                retried++;
                if (attempt >= 5) throw e;
              }
            }
          })(),
        );
      for (const r of await Promise.allSettled(wave)) {
        if (r.status === 'fulfilled') clients.push(r.value);
        else failed++;
      }
    }
    await sleep(2000);
    const negotiated = clients.filter((c) => c.ws.extensions !== '').length;
    return {
      perSession: (rss(server.pid) - before) / clients.length,
      negotiated,
      sessions: clients.length,
      failed,
      retried,
    };
  } finally {
    for (const c of clients) c.ws.terminate();
    server.stop();
  }
}

// ---------------------------------------------------------------------------------------

const current = resolve(here, '..');
const baseline = process.env.BAYOU_BASELINE;
/**
 * A mode: `plain`, `delta`, `deflate` or `delta+deflate`, then `@<n>` for a compression
 * threshold (`--compression-threshold n`) and `+acks` for clients that ask for numbered
 * frames and report them as `@bayou/client` does (its default path).
 * @param {string} name
 */
const parseMode = (name) => {
  const m = /^(plain|delta|deflate|delta\+deflate)(?:@(\d+))?(\+acks)?$/.exec(name);
  if (!m) throw new Error(`unknown mode ${name}`);
  const base = m[1] ?? 'plain';
  return {
    name,
    delta: base.startsWith('delta'),
    deflate: base.endsWith('deflate'),
    threshold: m[2],
    acks: m[3] !== undefined,
  };
};
const modes = (values.modes ?? 'plain,delta,deflate,delta+deflate').split(',').map(parseMode);
/** Builds to run every mode on: `label=dir of a packages/server`, then this one. */
const builds = [
  ...(values.builds ?? '')
    .split(',')
    .filter(Boolean)
    .map((b) => {
      const [label = '', dir = ''] = b.split('=');
      return { label, dir: resolve(dir) };
    }),
  { label: 'this', dir: current },
];
const uptime = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`bandwidth bench: ${CLIENTS} clients, ${SECONDS} s windows, load average ${uptime()}`);
/** @type {{ feed: string, mode: string, build: string, r: Awaited<ReturnType<typeof runRow>> }[]} */
const rows = [];
for (let round = 1; round <= (values['only-idle'] === true ? 0 : ROUNDS); round++) {
  for (const makeFeed of FEEDS.map((name) => FEED_MAKERS[name] ?? priceFeed)) {
    const feed = makeFeed();
    const runs = builds.flatMap((b) => modes.map((m) => ({ ...m, dir: b.dir, build: b.label })));
    if (baseline) runs.unshift({ ...parseMode('plain'), dir: resolve(baseline), build: 'baseline' });
    for (const m of runs) {
      reseed();
      const r = await runRow(m.dir, feed, m);
      rows.push({ feed: feed.name, mode: m.name, build: m.build, r });
      console.log(
        `r${round} ${feed.name.padEnd(6)} ${m.name.padEnd(18)} ${m.build.padEnd(9)} fan-out ${r.fanout.toFixed(1)}  ` +
          `fixed: ${r.atRate.rate} msg/s ${r.atRate.bytes.toFixed(1)} B/msg ${r.atRate.cpuUs.toFixed(2)} µs/msg ` +
          `${r.atRate.perFrame.toFixed(2)} msg/frame (deltas ${(r.atRate.deltaShare * 100).toFixed(0)}%)  sat: ${r.atSaturation.rate} msg/s ` +
          `${r.atSaturation.bytes.toFixed(1)} B/msg ${r.atSaturation.cpuUs.toFixed(2)} µs/msg ${r.atSaturation.perFrame.toFixed(2)} msg/frame  ` +
          `server RSS ${(r.rss / 1048576).toFixed(0)} MB  load ${uptime()}`,
      );
    }
  }
}
/** @param {number[]} xs */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};
/**
 * @param {string} feed
 * @param {string} mode
 * @param {string} build
 */
const summary = (feed, mode, build) => {
  const of = rows.filter((x) => x.feed === feed && x.mode === mode && x.build === build).map((x) => x.r);
  return {
    bytes: median(of.map((r) => r.atRate.bytes)),
    satBytes: median(of.map((r) => r.atSaturation.bytes)),
    cpu: median(of.map((r) => r.atRate.cpuUs)),
    satCpu: median(of.map((r) => r.atSaturation.cpuUs)),
    satRate: median(of.map((r) => r.atSaturation.rate)),
    rss: median(of.map((r) => r.rss)),
  };
};
const first = builds[0]?.label ?? 'this';
if (values['only-idle'] === true) FEEDS.length = 0;
console.log(
  `\nmedians of ${ROUNDS} round(s); ratios against ${modes[0]?.name} of the same build (same feed)` +
    (builds.length > 1 ? `, and CPU against the same mode on ${first}:` : ':'),
);
for (const feed of FEEDS) {
  /** @type {[string, string][]} */
  const list = [
    ...(baseline ? [/** @type {[string, string]} */ (['plain', 'baseline'])] : []),
    ...builds.flatMap((b) => modes.map((m) => /** @type {[string, string]} */ ([m.name, b.label]))),
  ];
  for (const [mode, build] of list) {
    const plain = summary(feed, modes[0]?.name ?? 'plain', build === 'baseline' ? 'this' : build);
    const x = summary(feed, mode, build);
    const against = builds.length > 1 ? summary(feed, mode, first) : null;
    console.log(
      `${feed.padEnd(6)} ${mode.padEnd(18)} ${build.padEnd(9)} ` +
        `fixed rate: ${x.bytes.toFixed(1)} B/msg (${(x.bytes / plain.bytes).toFixed(3)}x) ${x.cpu.toFixed(2)} µs/msg (${(x.cpu / plain.cpu).toFixed(2)}x)  ` +
        `saturation: ${x.satBytes.toFixed(1)} B/msg (${(x.satBytes / plain.satBytes).toFixed(3)}x) ${x.satCpu.toFixed(2)} µs/msg (${(x.satCpu / plain.satCpu).toFixed(2)}x) ${Math.round(x.satRate)} msg/s  ` +
        `RSS ${(x.rss / 1048576).toFixed(0)} MB` +
        (against
          ? `  CPU vs ${first}: fixed ${(x.cpu / against.cpu).toFixed(2)}x, sat. ${(x.satCpu / against.satCpu).toFixed(2)}x`
          : ''),
    );
  }
}

if (values['no-idle'] === true) process.exit(0);
console.log(`\nidle sessions (${IDLE}, clients compressing all they send when negotiated):`);
const idle = [];
if (baseline) idle.push({ name: 'off (baseline)', dir: resolve(baseline), deflate: false });
idle.push({ name: 'off', dir: current, deflate: false }, { name: 'on', dir: current, deflate: true });
const idleResults = [];
for (const i of idle) {
  const r = await idleRow(i.dir, i.deflate);
  idleResults.push(r);
  console.log(
    `compression ${i.name.padEnd(15)} ${(r.perSession / 1024).toFixed(2)} KB RSS per session (${r.sessions} sessions, ${r.retried} handshakes again, ${r.failed} failed to open, ${r.negotiated} negotiated deflate)`,
  );
}
const [on, off] = [idleResults.at(-1), idleResults.at(-2)];
if (on && off) console.log(`RSS per idle session, on / off: ${(on.perSession / off.perSession).toFixed(2)}x`);
console.log(`load average at the end ${uptime()}`);
