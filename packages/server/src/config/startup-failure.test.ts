import { describe, expect, it } from 'vitest';
import { BayouConfigError, BayouEngineError } from '../errors.js';
import { startupFailure } from './startup-failure.js';

const at = { host: '0.0.0.0', port: 80 };
const sysError = (code: string, message = code) => Object.assign(new Error(message), { code });
const redisDown = (cause: Error) =>
  new BayouEngineError(`cannot join the cluster on redis://10.0.0.5:6379: ${cause.message}`, { cause });

describe('startupFailure', () => {
  it('gives each listen error its fix', () => {
    expect(startupFailure(sysError('EADDRINUSE'), at)).toBe(
      'port 80 on 0.0.0.0 is in use — stop the other process, or pass --port <n> (--port 0 picks a free port)',
    );
    expect(startupFailure(sysError('EACCES'), at)).toMatch(
      /^no permission to listen on port 80 on 0\.0\.0\.0 — ports below 1024 need privileges: pass --port 8080/,
    );
    expect(startupFailure(sysError('ENOTFOUND'), { host: 'nope.invalid', port: 1 })).toBe(
      'cannot resolve the host name "nope.invalid" — pass --host with an IP address of this machine (127.0.0.1, 0.0.0.0)',
    );
  });

  it('tells Redis refused, unknown and refusing credentials apart', () => {
    expect(
      startupFailure(redisDown(sysError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.5:6379')), at),
    ).toContain('— is Redis running there? Start it (redis-server), or fix --redis / BAYOU_REDIS_URL');
    expect(startupFailure(redisDown(sysError('ENOTFOUND', 'getaddrinfo ENOTFOUND redis')), at)).toContain(
      '— the host name does not resolve',
    );
    expect(startupFailure(redisDown(new Error('WRONGPASS invalid username-password pair')), at)).toContain(
      '— Redis refused the credentials: fix the user and password in --redis / BAYOU_REDIS_URL',
    );
  });

  it('passes an option error as it is, and names anything else as unexpected, on one line', () => {
    expect(
      startupFailure(new BayouConfigError('BAYOU_ERR_CONFIG', 'tls.key and tls.cert go together'), at),
    ).toBe('tls.key and tls.cert go together');
    expect(startupFailure(new Error('boom\nsecond line'), at)).toBe(
      'could not start: boom (--log-level debug prints the stack)',
    );
  });
});
