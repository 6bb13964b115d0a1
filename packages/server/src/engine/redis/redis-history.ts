/**
 * A channel's history on Redis, read through scripts (`SINCE`, `LATEST`): the stream of a
 * channel's recent payloads and its position (offset, epoch), as `RedisBroker` wrote them.
 */
import { randomBytes } from 'node:crypto';
import type { History, Recovery, StreamPosition } from '../engine.js';
import type { RedisCore } from './redis-core.js';
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

  /**
   * What `channel` carried after `position`; `delivered` when a node delivered that very
   * position (it then starts a fresh epoch if the history lost it, see `SINCE`). A
   * client's position is never taken for one: it could name any offset.
   */
  async since(channel: string, position: StreamPosition, delivered = false): Promise<Recovery> {
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
    const [recovered, top, epoch, ...payloads] = reply;
    const latest = { offset: top, epoch };
    if (recovered !== 1) return { recovered: false, position: latest };
    const publications = payloads.map((payload, i) => ({
      channel,
      payload,
      position: { offset: position.offset + 1 + i, epoch },
    }));
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
