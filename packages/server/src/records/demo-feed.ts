/**
 * The built-in demo feed: `/demo/prices/<SYMBOL>` records (bid, ask, last, change, volume,
 * time) for a few thousand made-up symbols, produced by a provider — so only subjects
 * someone watches are computed. One shared timer drives every active subject.
 */
import {
  DEMO_PRICES_PATTERN,
  DEMO_PRICES_PREFIX,
  DEMO_SYMBOL_COUNT,
  demoSubject,
  demoSymbol,
} from '@bayou/protocol';
import { SERVER_DEFAULTS } from '../defaults.js';
import { rejectUnknownKeys, scopedInvalid } from '../option-errors.js';
import type { Provider } from './provider-registry.js';

/** What the feed needs of the application facade. */
export interface RecordPublisher {
  provide(pattern: string, provider: Provider): unknown;
  updateRecord(subject: string, fields: Record<string, unknown>): unknown;
}

export const DEMO_PATTERN = DEMO_PRICES_PATTERN;
const TICK_MS = 50;

/** The demo feed's defaults (`--demo-symbols`, `--demo-rate`). */
export const DEMO_FEED_DEFAULTS = SERVER_DEFAULTS.demoFeed;

export interface DemoFeedOptions {
  /** How many symbols exist (AAA, AAB, …). Default `2000`. */
  symbols?: number;
  /** Updates per second of each watched subject. Default `1`. */
  rate?: number;
}

/**
 * Checks the feed's options (a `BayouConfigError` naming `demoFeed.<key>` otherwise): at
 * most the 17,576 symbols `AAA`…`ZZZ` exist, so more is refused rather than cut silently.
 */
export function resolveDemoFeedOptions(options: DemoFeedOptions): Required<DemoFeedOptions> {
  const invalid = scopedInvalid('demoFeed');
  if (options === null || typeof options !== 'object') invalid('', 'true or { symbols?, rate? }');
  rejectUnknownKeys(options, ['symbols', 'rate'], 'demoFeed');
  const { symbols = DEMO_FEED_DEFAULTS.symbols, rate = DEMO_FEED_DEFAULTS.rate } = options;
  if (!Number.isInteger(symbols) || symbols < 1 || symbols > DEMO_SYMBOL_COUNT)
    invalid('symbols', `a whole number from 1 to ${DEMO_SYMBOL_COUNT} (the symbols AAA…ZZZ)`);
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) invalid('rate', 'a positive number');
  return { symbols, rate };
}

interface Quote {
  symbol: string;
  mid: number;
  open: number;
  volume: number;
  /** Fractional updates carried between ticks, so low rates still update. */
  credit: number;
}

export { demoSubject, demoSymbol };

export class DemoFeed {
  private readonly active = new Map<string, Quote>();
  private readonly symbols: Set<string>;
  private readonly perMs: number;
  private timer: NodeJS.Timeout | null = null;
  private last = 0;

  constructor(
    private readonly bayou: RecordPublisher,
    options: DemoFeedOptions = {},
  ) {
    const { symbols, rate } = resolveDemoFeedOptions(options);
    this.symbols = new Set(Array.from({ length: symbols }, (_, i) => demoSymbol(i)));
    this.perMs = rate / 1000;
    bayou.provide(DEMO_PATTERN, {
      onRequest: (subject) => this.start(subject),
      onDiscard: (subject) => this.active.delete(subject),
    });
  }

  get activeSubjects(): number {
    return this.active.size;
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private start(subject: string): void {
    const symbol = subject.slice(DEMO_PRICES_PREFIX.length);
    if (!this.symbols.has(symbol)) return;
    const mid = 10 + (hash(symbol) % 9000) / 10;
    const quote: Quote = { symbol, mid, open: mid, volume: 0, credit: Math.random() };
    this.active.set(subject, quote);
    this.bayou.updateRecord(subject, fieldsOf(quote));
    if (this.timer === null) {
      this.last = performance.now();
      this.timer = setInterval(() => this.tick(), TICK_MS);
      this.timer.unref();
    }
  }

  /** Credit follows the clock, so a late timer catches up and rates above 1/tick work. */
  private tick(): void {
    const now = performance.now();
    const gained = (now - this.last) * this.perMs;
    this.last = now;
    if (this.active.size === 0) return;
    for (const [subject, q] of this.active) {
      q.credit += gained;
      // Bounded, so a long stall does not turn into a burst.
      for (let n = Math.min(Math.floor(q.credit), 100); n > 0; n--) {
        q.credit -= 1;
        q.mid = Math.max(0.01, q.mid * (1 + (Math.random() - 0.5) * 0.002));
        q.volume += Math.floor(Math.random() * 1000);
        this.bayou.updateRecord(subject, fieldsOf(q));
      }
      if (q.credit > 100) q.credit = 0;
    }
  }
}

function fieldsOf(q: Quote): Record<string, unknown> {
  const spread = q.mid * 0.0004;
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  return {
    bid: round(q.mid - spread / 2),
    ask: round(q.mid + spread / 2),
    last: round(q.mid),
    change: round(q.mid - q.open),
    volume: q.volume,
    time: Date.now(),
  };
}

/** FNV-1a with a final mix, so neighbouring symbols get unrelated prices. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}
