import { describe, expect, it } from 'vitest';
import { BayeuxErrors, formatError, parseError } from './errors.js';

describe('Bayeux error strings', () => {
  it('uses the CometD strings', () => {
    expect(formatError('sessionUnknown')).toBe('402::session_unknown');
    expect(formatError('handshakeDenied')).toBe('403::handshake_denied');
    expect(formatError('subscribeDenied', ['/a'])).toBe('403:/a:subscribe_denied');
    expect(formatError('publishDenied', ['/a'])).toBe('403:/a:publish_denied');
    expect(formatError('channelMissing')).toBe('400::channel_missing');
    expect(formatError('channelInvalid')).toBe('405::channel_invalid');
  });

  it('round-trips every error through parseError', () => {
    for (const name of Object.keys(BayeuxErrors) as (keyof typeof BayeuxErrors)[]) {
      const parsed = parseError(formatError(name, ['x', 'y']));
      expect(parsed).toEqual({
        code: BayeuxErrors[name].code,
        args: ['x', 'y'],
        message: BayeuxErrors[name].message,
      });
    }
  });

  it('returns null for strings not in code:args:message form', () => {
    expect(parseError('oops')).toBeNull();
    expect(parseError('abc:def:ghi')).toBeNull();
    expect(parseError(403)).toBeNull();
  });
});

describe('formatError with hostile arguments', () => {
  it('keeps the code:args:message form whatever the arguments hold', () => {
    expect(formatError('channelInvalid', [':'])).toBe('405:_:channel_invalid');
    expect(formatError('channelInvalid', ['/a,b:c\n'])).toBe('405:/a_b_c_:channel_invalid');
    const long = formatError('channelInvalid', [`/${'x'.repeat(5000)}`]);
    expect(long.length).toBeLessThan(300);
    expect(parseError(long)).toMatchObject({ code: 405, message: 'channel_invalid' });
  });
});
