import { describe, expect, it } from 'vitest';
import { createServer } from './create-server.js';
import { BayouConfigError, BayouEngineError, BayouError } from './errors.js';
import { invalidOption, rejectUnknownKeys, scopedInvalid } from './option-errors.js';
import { resolveOptions } from './options.js';

describe('the error classes', () => {
  it('a programmer error is a BayouConfigError, a TypeError and (as before the split) a BayouError', () => {
    let caught: unknown;
    try {
      resolveOptions({ timeout: -1 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BayouConfigError);
    expect(caught).toBeInstanceOf(TypeError);
    expect(caught).toBeInstanceOf(BayouError);
    expect(caught).not.toBeInstanceOf(BayouEngineError);
    expect((caught as BayouConfigError).code).toBe('BAYOU_ERR_INVALID_OPTION');
    expect((caught as Error).message).toBe('option "timeout" must be a non-negative number');
  });

  it('an engine that cannot start is a BayouEngineError and a BayouError, not a TypeError', async () => {
    // Nothing listens on port 1: the Redis engine cannot connect when the server starts.
    const started = createServer({
      port: 0,
      redis: 'redis://127.0.0.1:1',
      redisEngine: { commandTimeoutMs: 200 },
    });
    const err = await started.then(
      async (s) => {
        await s.close();
        return null;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BayouEngineError);
    expect(err).toBeInstanceOf(BayouError);
    expect(err).not.toBeInstanceOf(TypeError);
    expect(err).not.toBeInstanceOf(BayouConfigError);
    expect((err as BayouEngineError).code).toBe('BAYOU_ERR_ENGINE');
    expect((err as Error).message).toContain('cannot join the cluster on redis://127.0.0.1:1');
  });

  it('BayouError itself still constructs, and its subclasses do not widen instanceof', () => {
    const plain = new BayouError('BAYOU_ERR_CONFIG', 'x');
    expect(plain).toBeInstanceOf(BayouError);
    expect(plain).not.toBeInstanceOf(BayouEngineError);
    expect(new BayouConfigError('BAYOU_ERR_CONFIG', 'x')).not.toBeInstanceOf(BayouEngineError);
  });
});

describe('the option-error helpers', () => {
  it('name the option, dotted under a scope, with the code of each kind', () => {
    expect(() => invalidOption('path', 'a path')).toThrow('option "path" must be a path');
    const webhooks = scopedInvalid('webhooks');
    expect(() => webhooks('url', 'an http(s) URL')).toThrow('option "webhooks.url" must be an http(s) URL');
    expect(() => webhooks('', 'an object')).toThrow('option "webhooks" must be an object');
    expect(() => scopedInvalid('proxy')('.connect.url', 'a URL')).toThrow(
      'option "proxy.connect.url" must be',
    );
    try {
      rejectUnknownKeys({ a: 1, b: 2, c: 3 }, ['a'], 'history[0]');
      expect.unreachable();
    } catch (err) {
      expect((err as BayouConfigError).code).toBe('BAYOU_ERR_UNKNOWN_OPTION');
      expect((err as Error).message).toBe('unknown option(s) in history[0]: b, c');
    }
    expect(() => rejectUnknownKeys({ a: 1 }, ['a'])).not.toThrow();
  });

  it('suggest the closest option for a typo, in every group the resolvers check', async () => {
    expect(() => rejectUnknownKeys({ timout: 1 }, ['timeout', 'interval'])).toThrow(
      'unknown option(s): timout (did you mean timeout?)',
    );
    const cases: [Record<string, unknown>, string][] = [
      [{ limits: { publishRat: 1 } }, 'unknown option(s) in limits: publishRat (did you mean publishRate?)'],
      [
        { webhooks: { url: 'http://127.0.0.1:1/h', retyFor: 1 } },
        'unknown option(s) in webhooks: retyFor (did you mean retryFor?)',
      ],
      [
        { proxy: { conect: 'http://127.0.0.1:1/c' } },
        'unknown option(s) in proxy: conect (did you mean connect?)',
      ],
      [{ demoFeed: { symbol: 5 } }, 'unknown option(s) in demoFeed: symbol (did you mean symbols?)'],
      [
        { maxConectionsPerIp: 1 },
        'unknown option(s): maxConectionsPerIp (did you mean maxConnectionsPerIp?)',
      ],
    ];
    for (const [options, message] of cases)
      await expect(createServer({ port: 0, ...options })).rejects.toThrow(message);
  });
});
