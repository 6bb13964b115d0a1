/** Runs one part of a scenario (all of it with one worker) against a fresh driver. */
import { LOST_AT_CAP, type PartContext, type PartResult, type Slice } from './context.js';
import type { DriverFactory } from './driver.js';
import { headerMap } from './option-values.js';
import type { LoadtestOptions, Scenario } from './options.js';
import { runChat } from './scenarios/chat.js';
import { runConnections } from './scenarios/connections.js';
import { DemoFeedTracker } from './scenarios/demo-feed.js';
import { runFeed } from './scenarios/feed.js';
import { DeliveryStats, now, type SeriesPoint } from './stats.js';

export interface PartHooks {
  barrier: (name: string) => Promise<void>;
  onTick: (point: SeriesPoint, connected: number) => void;
  onWindow: (event: 'open' | 'close') => void;
}

const SCENARIO_RUNNERS = { chat: runChat, feed: runFeed, connections: runConnections } as const;

export async function runPart(
  scenario: Scenario,
  options: Readonly<LoadtestOptions>,
  slice: Slice,
  factory: DriverFactory,
  hooks: PartHooks,
): Promise<PartResult> {
  const stats = new DeliveryStats();
  stats.maxLatencyUs = options.maxLatency * 1000;
  let sessionsLost = 0;
  const lostReasons: Record<string, number> = {};
  const lostAt: number[] = [];
  const demo =
    scenario === 'feed' && options.source === 'demo' ? new DemoFeedTracker(options, slice, stats) : undefined;
  const driver = factory({
    url: options.url,
    localAddresses: options.localAddresses,
    localPortBase: options.localPortBase,
    headers: headerMap(options.headers),
    handshakeExt: options.handshakeExt,
    compression: options.compression,
    heartbeat: options.heartbeat,
    sink: (id, sentAt) => stats.onDeliver(id, sentAt, now()),
    records: demo,
    onFrame: () => {
      stats.frames++;
    },
    onSessionLost: (_index, reason) => {
      sessionsLost++;
      tally(lostReasons, reason ?? 'unknown');
      if (lostAt.length < LOST_AT_CAP) lostAt.push(Date.now());
    },
  });
  const ctx: PartContext = { options, slice, driver, stats, ...hooks, demo };
  const ticker = setInterval(() => {
    const point = stats.tick();
    point.connected = driver.connected();
    hooks.onTick(point, point.connected);
  }, 1000);
  try {
    const result = await SCENARIO_RUNNERS[scenario](ctx);
    // A late delivery seen while draining fails the run as well as one seen while publishing.
    const aborted =
      result.aborted ??
      (stats.latencyExceeded ? `latency above --max-latency ${options.maxLatency}ms` : undefined);
    return { ...result, aborted, sessionsLost, lostReasons, lostAt };
  } finally {
    clearInterval(ticker);
    await driver.close();
  }
}

/** The reasons sessions were lost, counted; past 8 distinct ones the rest count as `other`. */
function tally(counts: Record<string, number>, reason: string): void {
  const key = reason in counts || Object.keys(counts).length < 8 ? reason : 'other';
  counts[key] = (counts[key] ?? 0) + 1;
}
