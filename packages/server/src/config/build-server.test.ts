import { describe, expect, it } from 'vitest';
import { BayouError } from '../errors.js';
import { authOf, buildServer, drainSpreadWithin, loggerFor } from './build-server.js';

describe('buildServer', () => {
  it('refuses a console password the flag would refuse, from the file too: empty, short or not a string', async () => {
    for (const password of ['', 'short', 42])
      await expect(
        buildServer({ port: 0, logger: false, admin: { enabled: true, password } as never }),
      ).rejects.toThrow(
        'admin.password (--admin-password, BAYOU_ADMIN_PASSWORD) must be at least 12 characters',
      );
    await expect(buildServer({ port: 0, logger: false, admin: { enabled: 'yes' } as never })).rejects.toThrow(
      'admin.enabled (--admin, BAYOU_ADMIN) must be true or false',
    );
  });

  it('listens on loopback while open, on every interface with tokens, and says which', async () => {
    const open = await buildServer({ port: 0, logger: false });
    expect(open.host).toBe('127.0.0.1');
    expect(open.posture).toMatch(/^OPEN server: .*localhost only.*publish API off$/);
    await open.server.close();
    // Any loopback address is localhost only (IPv6's too); another address is not.
    for (const [host, local] of [
      ['::1', true],
      ['127.0.0.2', true],
      ['0.0.0.0', false],
    ] as const) {
      const built = await buildServer({ port: 0, logger: false, host });
      expect(built.posture.includes('localhost only'), host).toBe(local);
      await built.server.close();
    }
    const locked = await buildServer({
      port: 0,
      logger: false,
      tokens: { secret: 'x'.repeat(32) },
      apiKey: 'k'.repeat(16),
    });
    expect(locked.host).toBe('0.0.0.0');
    expect(locked.posture).toBe('tokens required; publish API on');
    expect(locked.auth.tokensOn).toBe(true);
    await locked.server.close();
  });

  it('takes tokens from the plugin-style auth option of a config file as from the top-level keys', async () => {
    const built = await buildServer({
      port: 0,
      logger: false,
      auth: { tokens: { secret: 'x'.repeat(32) }, allowAnonymous: true },
    });
    expect(built.host).toBe('0.0.0.0');
    expect(built.auth.tokensOn).toBe(true);
    expect(built.posture).toBe('tokens required (anonymous sessions allowed); publish API off');
    // The flags' form wins over the file's auth object, key by key.
    const channels = { rules: [] };
    const merged = authOf({
      auth: { tokens: { secret: 'a'.repeat(32) }, channels },
      tokens: { jwksUrl: 'https://k/x' },
    });
    expect(merged).toEqual({ tokens: { jwksUrl: 'https://k/x' }, channels });
    expect(authOf({})).toBeUndefined();
    await built.server.close();
  });

  it('treats a connect backend as authentication, and hands proxy and webhooks to the server', async () => {
    const built = await buildServer({
      port: 0,
      logger: false,
      proxy: { connect: 'http://127.0.0.1:1/connect' },
      webhooks: { url: 'http://127.0.0.1:1/hooks' },
    });
    expect(built.host).toBe('0.0.0.0');
    expect(built.posture).toBe('handshakes decided by the connect backend; publish API off');
    const metrics = await built.server.app.inject({ url: '/metrics' });
    expect(metrics.body).toContain('bayou_webhook_events_queued 0');
    expect(metrics.body).toContain('bayou_proxy_calls_total');
    await built.server.close();
  });

  it('fits the paced drain in the shutdown timeout: the default spread halves the timeout, one given too long is refused', () => {
    expect(drainSpreadWithin({})).toBeUndefined(); // 5 s within 10 s: as it is
    expect(drainSpreadWithin({ shutdownTimeout: 300 })).toBe(150);
    expect(drainSpreadWithin({ drainSpread: 0, shutdownTimeout: 300 } as never)).toBeUndefined();
    expect(drainSpreadWithin({ drainSpread: 200, shutdownTimeout: 300 } as never)).toBeUndefined();
    expect(() => drainSpreadWithin({ drainSpread: 300, shutdownTimeout: 300 } as never)).toThrow(
      /--drain-spread/,
    );
  });

  it('refuses a short secret, a lone TLS file, a missing TLS file and a bad origin', async () => {
    await expect(buildServer({ tokens: { secret: 'short' } })).rejects.toThrow(/at least 32/);
    await expect(buildServer({ tls: { key: 'k.pem' } as never })).rejects.toThrow(/go together/);
    // The paced drain runs within the shutdown timeout: a spread given that long is refused.
    await expect(
      buildServer({ port: 0, logger: false, drainSpread: 20_000, shutdownTimeout: 10_000 }),
    ).rejects.toThrow(
      /drainSpread \(--drain-spread\) 20000 ms must be shorter than shutdownTimeout \(--shutdown-timeout\) 10000 ms.*raise --shutdown-timeout \(e\.g\. to 25000\)/,
    );
    await expect(buildServer({ tls: { key: '/nope/k.pem', cert: '/nope/c.pem' } })).rejects.toBeInstanceOf(
      BayouError,
    );
    await expect(buildServer({ allowedOrigins: ['example.com'] })).rejects.toThrow(/--allowed-origins/);
  });
});

describe('loggerFor', () => {
  it('is pretty on a terminal, JSON otherwise, and what the config says when it says', () => {
    expect(loggerFor({}, false)).toEqual({ level: 'info' });
    const pretty = loggerFor({ logLevel: 'debug' }, true) as { level: string; transport: { target: string } };
    expect(pretty.level).toBe('debug');
    expect(pretty.transport.target).toMatch(/pino-pretty/);
    expect(loggerFor({ logFormat: 'json' }, true)).toEqual({ level: 'info' });
    expect(loggerFor({ logFormat: 'pretty' }, false)).toHaveProperty('transport');
    expect(loggerFor({ logger: false }, true)).toBe(false);
  });
});
