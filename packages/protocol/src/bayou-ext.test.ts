import { describe, expect, it } from 'vitest';
import {
  DEFAULTS,
  DEMO_PRICES_PATTERN,
  DEMO_PRICES_PREFIX,
  EXT_HEARTBEAT,
  EXT_TRACEPARENT,
  isTraceparent,
} from './bayou-ext.js';

describe('isTraceparent', () => {
  const id = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parent = '00f067aa0ba902b7';

  it('accepts a version-00 W3C traceparent, sampled or not', () => {
    expect(EXT_TRACEPARENT).toBe('traceparent');
    expect(isTraceparent(`00-${id}-${parent}-01`)).toBe(true);
    expect(isTraceparent(`00-${id}-${parent}-00`)).toBe(true);
  });

  it('refuses all-zero ids, upper case, other versions, wrong lengths and non-strings', () => {
    for (const bad of [
      `00-${'0'.repeat(32)}-${parent}-01`,
      `00-${id}-${'0'.repeat(16)}-01`,
      `00-${id.toUpperCase()}-${parent}-01`,
      `ff-${id}-${parent}-01`,
      `00-${id}-${parent}-1`,
      `00-${id}-${parent}-01-extra`,
      ` 00-${id}-${parent}-01`,
      undefined,
      42,
      { traceparent: `00-${id}-${parent}-01` },
    ])
      expect(isTraceparent(bad)).toBe(false);
  });
});

describe('constants written out for bundles', () => {
  it('spell what they are derived from', () => {
    expect(DEMO_PRICES_PATTERN).toBe(`${DEMO_PRICES_PREFIX}*`);
    expect(DEFAULTS.maxPayloadBytes).toBe(64 * 1024);
    expect(EXT_HEARTBEAT).toBe('heartbeat');
  });
});
