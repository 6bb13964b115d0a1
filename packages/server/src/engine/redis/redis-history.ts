/**
 * A channel's history on Redis, read through scripts (`SINCE`, `LATEST`): the stream of a
 * channel's recent payloads and its position (offset, epoch), as `RedisBroker` wrote them.
 */
import { randomBytes } from 'node:crypto';
import type { History, Recovery, StreamPosition } from '../engine.js';
import type { RedisCore } from './redis-core.js';
import type { NodeRecovery } from './redis-delivery.js';
import { LATEST, runScript, SINCE } from './redis-scripts.js';

/** Drawn once per process; `newEpoch` appends a counter, so no draw per publish. */
const EPOCH_BASE = randomBytes(6).toString('base64url');
let epochs = 0;

/**
 * A fresh epoch, for Redis to take when a channel's history is missing (the scripts use
 * it only then): unique across nodes (random part) and within one (counter), so a history
 * lost twice never comes back under an epoch clients already hold. Cheap enough to build
 * for every publish, unlike drawing random bytes each time.
 */
export function newEpoch(): string {
  epochs = (epochs + 1) % Number.MAX_SAFE_INTEGER;
  return `${EPOCH_BASE}${epochs.toString(36)}`;
}

export class RedisHistory implements History {
  constructor(private readonly engine: RedisCore) {}

  /** What `channel` carried after a client's `position`: never taken for one a node delivered. */
  async since(channel: string, position: StreamPosition): Promise<Recovery> {
    // Only a node's own position can be answered `restarted`.
    return this.read(channel, position, false) as Promise<Recovery>;
  }

  /**
   * What `channel` carried after `position`, the last one this node delivered on it: as
   * `since`, and if history lost that position (see `SINCE`) it starts a fresh epoch; if
   * that position's epoch is over, the current epoch from its start, when history still
   * holds all of it (`restarted`).
   */
  delivered(channel: string, position: StreamPosition): Promise<NodeRecovery> {
    return this.read(channel, position, true);
  }

  private async read(channel: string, position: StreamPosition, delivered: boolean): Promise<NodeRecovery> {
    const e = this.engine;
    if (!Number.isSafeInteger(position.offset) || typeof position.epoch !== 'string') {
      return { recovered: false, position: await this.latest(channel) };
    }
    const reply = (await e.track(
      runScript(
        e.commands(),
        SINCE,
        [e.keys.meta(channel), e.keys.stream(channel)],
        [position.offset, position.epoch, newEpoch(), e.options.epochTtlMs, delivered ? '1' : '0'],
      ),
    )) as [number, number, string, ...string[]];
    const [found, top, epoch, ...payloads] = reply;
    const latest = { offset: top, epoch };
    if (found === 0) return { recovered: false, position: latest };
    const from = found === 2 ? 0 : position.offset;
    const publications = payloads.map((payload, i) => ({
      channel,
      payload,
      position: { offset: from + 1 + i, epoch },
    }));
    if (found === 2) return { recovered: false, restarted: publications, position: latest };
    return { recovered: true, publications, position: latest };
  }

  async latest(channel: string): Promise<StreamPosition> {
    const e = this.engine;
    const [offset, epoch] = (await e.track(
      runScript(
        e.commands(),
        LATEST,
        [e.keys.meta(channel), e.keys.stream(channel)],
        [newEpoch(), e.options.epochTtlMs],
      ),
    )) as [number, string];
    return { offset, epoch };
  }
}
