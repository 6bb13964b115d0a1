/** Record patterns: which channels carry records, and their throttle bounds. */
import { EXT_RECORD_REQUEST, parseChannel } from '@bayou/protocol';
import { optionProblem, rejectUnknownKeys } from '../option-errors.js';

export interface RecordPattern {
  /** A channel or pattern (`/fx/*`, `/prices/**`) whose subjects are records. */
  pattern: string;
  /** Default conflation window in ms for subscribers that ask for none; 0 sends every update. Default `0`. */
  throttleMs?: number;
  /** Most updates per second any subscriber may get (clamps what clients ask). Default: unbounded. */
  maxFrequency?: number;
}

export type ResolvedRecordPattern = Readonly<Required<RecordPattern>>;

export function resolveRecordPatterns(patterns: readonly RecordPattern[]): ResolvedRecordPattern[] {
  return patterns.map((p, i) => {
    const where = `records[${i}]`;
    rejectUnknownKeys(p, ['pattern', 'throttleMs', 'maxFrequency'], where);
    const info = parseChannel(p.pattern);
    if (info === null || info.kind !== 'broadcast') {
      optionProblem(`${where}.pattern must be a broadcast channel or pattern, got "${p.pattern}"`);
    }
    const throttleMs = p.throttleMs ?? 0;
    const maxFrequency = p.maxFrequency ?? Number.POSITIVE_INFINITY;
    if (!(throttleMs >= 0)) optionProblem(`${where}.throttleMs must be ≥ 0`);
    if (!(maxFrequency > 0)) optionProblem(`${where}.maxFrequency must be > 0`);
    return Object.freeze({ pattern: p.pattern, throttleMs, maxFrequency });
  });
}

/** What a subscription may ask for, in the subscribe message's `ext.record`. */
export interface RecordRequest {
  fields?: string[];
  maxFrequency?: number;
}

export function readRecordRequest(ext: unknown): RecordRequest {
  const r = (ext as Record<string, unknown> | undefined)?.[EXT_RECORD_REQUEST] as
    | Record<string, unknown>
    | undefined;
  if (r === undefined || r === null || typeof r !== 'object') return {};
  const out: RecordRequest = {};
  if (Array.isArray(r.fields) && r.fields.length <= 256 && r.fields.every((f) => typeof f === 'string')) {
    out.fields = r.fields as string[];
  }
  if (typeof r.maxFrequency === 'number' && r.maxFrequency > 0) out.maxFrequency = r.maxFrequency;
  return out;
}

/** The conflation window for a subscription: what it asked, clamped to the pattern's bound. */
export function effectiveThrottle(pattern: ResolvedRecordPattern, request: RecordRequest): number {
  const asked = request.maxFrequency !== undefined ? 1000 / request.maxFrequency : pattern.throttleMs;
  const floor = Number.isFinite(pattern.maxFrequency) ? 1000 / pattern.maxFrequency : 0;
  return Math.max(asked, floor);
}
