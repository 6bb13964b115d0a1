/**
 * How much history each channel keeps: `historySize` messages for `historyTtl` ms by
 * default, or what the first matching `history` rule says (`0` turns it off). Decided
 * once per channel and remembered, so a publish costs a map lookup.
 */
import { expandChannel } from '@bayou/protocol';
import type { HistoryPolicy } from '../engine/engine.js';
import type { ResolvedOptions } from '../options.js';

const OFF: HistoryPolicy = Object.freeze({ size: 0, ttlMs: 0 });
/** Channels remembered before the cache starts over (channel names are unbounded). */
const CACHE_LIMIT = 10_000;

export class HistoryRules {
  private readonly fallback: HistoryPolicy;
  private readonly rules: ReadonlyMap<string, HistoryPolicy>;
  private readonly cache = new Map<string, HistoryPolicy>();

  constructor(options: Pick<ResolvedOptions, 'historySize' | 'historyTtl' | 'history'>) {
    this.fallback = policy(options.historySize, options.historyTtl);
    this.rules = new Map(
      options.history.map((r) => [
        r.pattern,
        policy(r.size ?? options.historySize, r.ttl ?? options.historyTtl),
      ]),
    );
  }

  policyFor(channel: string): HistoryPolicy {
    if (this.rules.size === 0) return this.fallback;
    let p = this.cache.get(channel);
    if (p !== undefined) return p;
    p = this.fallback;
    for (const name of expandChannel(channel)) {
      const rule = this.rules.get(name);
      if (rule !== undefined) {
        p = rule;
        break;
      }
    }
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(channel, p);
    return p;
  }
}

function policy(size: number, ttlMs: number): HistoryPolicy {
  return size > 0 && ttlMs > 0 ? Object.freeze({ size, ttlMs }) : OFF;
}
