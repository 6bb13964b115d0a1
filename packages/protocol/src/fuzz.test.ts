/**
 * Property tests of everything that reads untrusted input: whatever arrives, decoding and
 * validation answer with a result (ok, or a reason / a Bayeux error string) and never
 * throw. The seed is fixed and the runs bounded so `npm test` is repeatable; for a longer
 * search run `FUZZ_RUNS=100000 FUZZ_SEED=$RANDOM npx vitest run --project protocol fuzz`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandChannel, isValidChannel, matches, parseChannel } from './channel.js';
import { parseError } from './errors.js';
import { decodeBatch, jsonDepthExceeds, MAX_JSON_DEPTH, validateMessage } from './validate.js';

const runs = Number(process.env.FUZZ_RUNS ?? 300);
const seed = Number(process.env.FUZZ_SEED ?? 20261122);
const params = { numRuns: runs, seed };
/** Long runs get time in proportion. */
const timeout = Math.max(5_000, runs * 2);

const segment = fc.stringMatching(/^[A-Za-z0-9\-_!~()$@.+]{1,8}$/);
const channel = fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => `/${s.join('/')}`);
const channelLike = fc.oneof(
  channel,
  channel.map((c) => `${c}/*`),
  channel.map((c) => `${c}/**`),
  fc.constantFrom('/meta/handshake', '/meta/connect', '/meta/subscribe', '/service/x', '/*', '/**'),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: fc.constantFrom('/', '*', 'a', '.', ' ', '\u0000', 'é') }),
);
const ext = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })),
  fc.anything(),
);
const messageLike = fc.record(
  {
    channel: fc.oneof(channelLike, fc.anything()),
    id: fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.anything()),
    clientId: fc.oneof(fc.string({ maxLength: 12 }), fc.anything()),
    data: fc.jsonValue({ maxDepth: 4 }),
    ext,
    subscription: fc.oneof(channelLike, fc.array(channelLike, { maxLength: 3 }), fc.anything()),
    version: fc.constantFrom('1.0', 1, null),
    supportedConnectionTypes: fc.oneof(fc.array(fc.string({ maxLength: 12 })), fc.anything()),
  },
  { requiredKeys: [] },
);

/** Small edits of a well-formed batch's text: what a broken or hostile client sends. */
const mutatedText = fc
  .tuple(
    fc.array(messageLike, { minLength: 1, maxLength: 4 }),
    fc.array(
      fc.record({
        at: fc.nat(),
        cut: fc.nat({ max: 4 }),
        insert: fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', ':', 'x', '1') }),
      }),
      { maxLength: 4 },
    ),
  )
  .map(([batch, edits]) => {
    let text = JSON.stringify(batch) ?? '[]';
    for (const e of edits) {
      const at = text.length === 0 ? 0 : e.at % text.length;
      text = text.slice(0, at) + e.insert + text.slice(at + e.cut);
    }
    return text;
  });

function isBayeuxError(text: string): boolean {
  // Exactly three parts: the arguments never carry a separator of their own.
  if (!/^\d{3}:[^:]*:[a-z_]+$/.test(text)) return false;
  const parsed = parseError(text);
  return parsed !== null && parsed.code >= 400 && parsed.code < 600 && parsed.message.length > 0;
}

function checkDecoded(text: string): void {
  const decoded = decodeBatch(text);
  if (!decoded.ok) {
    expect(typeof decoded.reason).toBe('string');
    return;
  }
  expect(decoded.messages.length).toBeGreaterThan(0);
  for (const m of decoded.messages) {
    const v = validateMessage(m, text.includes('__proto__'));
    if (!v.ok) expect(isBayeuxError(v.error)).toBe(true);
  }
}

describe('fuzz: decodeBatch and validateMessage', { timeout }, () => {
  it('answer arbitrary strings without throwing', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), checkDecoded), params);
  });

  it('answer mutated batches without throwing', () => {
    fc.assert(fc.property(mutatedText, checkDecoded), params);
  });

  it('answer arbitrary JSON values without throwing', () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 6 }), (text) => checkDecoded(text)),
      params,
    );
  });

  it('validateMessage answers any value with ok or a Bayeux error, keeping a string id', () => {
    fc.assert(
      fc.property(fc.oneof(messageLike, fc.anything()), (value) => {
        const v = validateMessage(value);
        if (v.ok) {
          expect(isValidChannel(v.message.channel)).toBe(true);
          if (v.message.id !== undefined) expect(typeof v.message.id).toBe('string');
        } else {
          expect(isBayeuxError(v.error)).toBe(true);
          if (v.id !== undefined) expect(typeof v.id).toBe('string');
        }
      }),
      params,
    );
  });

  it('refuses any __proto__ key the scan is asked to look for', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.nat({ max: 5 }), (data, depth) => {
        let inner = '{"__proto__":{"polluted":true}}';
        for (let i = 0; i < depth; i++) inner = `{"k":${inner}}`;
        const text = `[{"channel":"/a","data":${JSON.stringify(data)},"ext":${inner}}]`;
        const decoded = decodeBatch(text);
        expect(decoded.ok).toBe(true);
        if (!decoded.ok) return;
        const v = validateMessage(decoded.messages[0], true);
        expect(v).toMatchObject({ ok: false, error: '400:__proto__:forbidden_key' });
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      params,
    );
  });
});

describe('fuzz: channels', { timeout }, () => {
  it('parseChannel answers anything with a result or null', () => {
    fc.assert(
      fc.property(fc.oneof(channelLike, fc.anything()), (name) => {
        const info = parseChannel(name);
        if (info !== null) expect(typeof name).toBe('string');
      }),
      params,
    );
  });

  it('every name expandChannel lists is a valid pattern that matches the channel', () => {
    fc.assert(
      fc.property(channel, (c) => {
        for (const p of expandChannel(c)) {
          expect(parseChannel(p)).not.toBeNull();
          expect(matches(p, c)).toBe(true);
        }
      }),
      params,
    );
  });

  it('matches agrees with the one-segment and any-depth rules', () => {
    fc.assert(
      fc.property(channel, fc.array(segment, { minLength: 1, maxLength: 3 }), (base, rest) => {
        const child = `${base}/${rest.join('/')}`;
        expect(matches(`${base}/**`, child)).toBe(true);
        expect(matches(`${base}/*`, child)).toBe(rest.length === 1);
        expect(matches(`${child}/**`, base)).toBe(false);
      }),
      params,
    );
  });
});

describe('nesting depth', { timeout }, () => {
  it('refuses a 20,000-deep body with a reason, before parsing', () => {
    for (const [open, close] of [
      ['[', ']'],
      ['{"a":', '}'],
    ] as const) {
      const text = open.repeat(20_000) + close.repeat(20_000);
      expect(decodeBatch(text)).toEqual({
        ok: false,
        reason: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
      });
    }
  });

  it('accepts nesting up to the limit and ignores brackets inside strings', () => {
    const deep = `[${'{"a":'.repeat(MAX_JSON_DEPTH - 1)}1${'}'.repeat(MAX_JSON_DEPTH - 1)}]`;
    expect(decodeBatch(deep).ok).toBe(true);
    const tooDeep = `[${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}]`;
    expect(decodeBatch(tooDeep).ok).toBe(false);
    const inString = JSON.stringify([{ channel: '/a', data: `\\"${'['.repeat(500)}` }]);
    expect(decodeBatch(inString).ok).toBe(true);
    expect(decodeBatch('[{"channel":"/a"}]', 1).ok).toBe(false);
  });

  it('jsonDepthExceeds agrees with the real depth of any JSON value', () => {
    const depthOf = (v: unknown): number =>
      v !== null && typeof v === 'object'
        ? 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depthOf))
        : 0;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (v, limit) => {
        expect(jsonDepthExceeds(JSON.stringify(v), limit)).toBe(depthOf(v) > limit);
      }),
      params,
    );
  });
});
