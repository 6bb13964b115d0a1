import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { closest } from '@bayou/protocol';
import { describe, expect, it } from 'vitest';
import { BayouError } from '../errors.js';
import { FLAGS, parseEnv, parseFlags, UsageError, usage } from './flags.js';
import { resolveCli } from './resolve-config.js';

const dir = mkdtempSync(join(tmpdir(), 'bayou-config-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('parseFlags', () => {
  it('reads values, = forms, booleans and lists into config keys', () => {
    const p = parseFlags([
      'start',
      '--port',
      '9000',
      '--jwt-secret=abc',
      '--allow-anonymous',
      '--allowed-origins',
      'https://a.example, https://b.example',
      '--demo-rate',
      '2.5',
    ]);
    expect(p.command).toBe('start');
    expect(p.layer).toEqual({
      port: 9000,
      tokens: { secret: 'abc' },
      allowAnonymous: true,
      allowedOrigins: ['https://a.example', 'https://b.example'],
      demoRate: 2.5,
    });
  });

  it('names an unknown flag and the closest valid one', () => {
    expect(() => parseFlags(['start', '--jwt-secrett', 'x'])).toThrow(
      'unknown flag --jwt-secrett; did you mean --jwt-secret?',
    );
    expect(() => parseFlags(['--prot=1'])).toThrow('did you mean --port?');
    expect(() => parseFlags(['--zzzzzzzzzz'])).toThrow(/^unknown flag --zzzzzzzzzz$/);
  });

  it('refuses bad values, naming the flag but never echoing a secret', () => {
    expect(() => parseFlags(['--port', '70000'])).toThrow('--port must be 0-65535, got "70000"');
    expect(() => parseFlags(['--log-format', 'xml'])).toThrow(/must be one of auto, pretty, json/);
    expect(() => parseFlags(['--port'])).toThrow('--port needs a value');
    expect(() => parseFlags(['--allow-anonymous=maybe'])).toThrow(UsageError);
    expect(() => parseFlags(['start', 'again'])).toThrow(/unexpected argument/);
  });

  it('recognizes --version, -v, --help, -h', () => {
    expect(parseFlags(['--version']).version).toBe(true);
    expect(parseFlags(['-v']).version).toBe(true);
    expect(parseFlags(['-h']).help).toBe(true);
  });

  it('documents every flag with its env variable and default in --help', () => {
    const text = usage();
    for (const f of FLAGS) {
      expect(text).toContain(`--${f.flag}`);
      for (const e of f.env) expect(text).toContain(e);
      expect(text).toContain(`default ${f.default}`);
    }
  });
});

describe('parseEnv', () => {
  it('reads PORT, HOST and BAYOU_* for every flag, and warns about unknown BAYOU_ names', () => {
    const e = parseEnv({
      PORT: '81',
      HOST: '::',
      BAYOU_API_KEY: 'k'.repeat(20),
      BAYOU_DEMO_FEED: 'yes',
      BAYOU_JWT_SECRETT: 'x',
    });
    expect(e.layer).toEqual({ port: 81, host: '::', apiKey: 'k'.repeat(20), demoFeed: true });
    expect(e.warnings).toEqual([
      'unknown environment variable BAYOU_JWT_SECRETT; did you mean BAYOU_JWT_SECRET?',
    ]);
    expect(parseEnv({ BAYOU_PORT: '82' }).layer).toEqual({ port: 82 });
    expect(() => parseEnv({ PORT: 'x' })).toThrow('PORT must be 0-65535, got "x"');
    expect(() => parseEnv({ BAYOU_JWT_SECRET: '' })).not.toThrow();
  });

  it('the README documents every flag with its variables', () => {
    const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
    for (const f of FLAGS) {
      expect(readme).toContain(`\`--${f.flag}`);
      for (const e of f.env) expect(readme).toContain(`\`${e}\``);
    }
  });

  it('every flag has a BAYOU_ variable', () => {
    for (const f of FLAGS) expect(f.env.some((e) => e.startsWith('BAYOU_'))).toBe(true);
  });
});

describe('resolveCli precedence: flags > env > file > defaults', () => {
  const json = file(
    'c.json',
    JSON.stringify({ port: 1000, path: '/file', timeout: 5000, tokens: { jwksUrl: 'https://k/x' } }),
  );

  it('takes each value from the highest source that sets it', async () => {
    const r = await resolveCli(['start', '--config', json, '--path', '/flag'], {
      BAYOU_PATH: '/env',
      PORT: '2000',
    });
    expect(r.config).toMatchObject({ port: 2000, path: '/flag', timeout: 5000 });
    const r2 = await resolveCli(['start', '--config', json], { BAYOU_PATH: '/env' });
    expect(r2.config).toMatchObject({ port: 1000, path: '/env' });
    const r3 = await resolveCli(['start'], {});
    expect(r3.config).toEqual({});
  });

  it('lets a higher secret replace a lower JWKS URL and vice versa', async () => {
    const r = await resolveCli(['start', '--config', json], { BAYOU_JWT_SECRET: 's'.repeat(32) });
    expect(r.config.tokens).toEqual({ secret: 's'.repeat(32) });
  });

  it('takes the config file from BAYOU_CONFIG too, and loads a module with hooks', async () => {
    const mjs = file(
      'bayou.config.mjs',
      `export default { port: 3000, canPublish: (_s, ch) => ch !== '/ro', demoFeed: true };`,
    );
    const r = await resolveCli(['start', '--demo-symbols', '10'], { BAYOU_CONFIG: mjs });
    expect(r.configPath).toBe(mjs);
    expect(r.config.port).toBe(3000);
    expect(typeof r.config.canPublish).toBe('function');
    expect(r.config.demoFeed).toEqual({ symbols: 10 });
    // Without the feed they would do nothing: refused with the flag that turns it on.
    await expect(resolveCli(['start', '--demo-rate', '5'], {})).rejects.toThrow(
      'shape the demo feed, which is off: add --demo-feed (BAYOU_DEMO_FEED=1)',
    );
  });

  it('merges limits from every source key by key, and takes queue, timeout and connection flags', async () => {
    const limitsFile = file(
      'limits.json',
      JSON.stringify({ limits: { publishRate: 5, maxSessionsPerIp: 50 } }),
    );
    const r = await resolveCli(
      [
        'start',
        '--config',
        limitsFile,
        '--max-sessions-per-ip',
        '7',
        '--max-queued-bytes=1024',
        '--handshake-timeout',
        '2500',
        '--trust-proxy',
        '10.0.0.0/8, loopback',
      ],
      { BAYOU_HANDSHAKE_RATE: '20', BAYOU_MAX_CONNECTIONS: '900', BAYOU_TIMEOUT: '15000' },
    );
    expect(r.config).toMatchObject({
      limits: { publishRate: 5, maxSessionsPerIp: 7, handshakeRate: 20 },
      maxQueuedBytes: 1024,
      handshakeTimeout: 2500,
      maxConnections: 900,
      timeout: 15000,
      trustProxy: '10.0.0.0/8, loopback',
    });
    expect(
      parseFlags(['--interval=250', '--sweep-interval', '500', '--max-sessions-per-browser', '2']).layer,
    ).toEqual({ interval: 250, sweepInterval: 500, maxSessionsPerBrowser: 2 });
    expect(parseFlags(['--trust-proxy', 'true']).layer).toEqual({ trustProxy: true });
    expect(parseFlags(['--trust-proxy=off']).layer).toEqual({ trustProxy: false });
    expect(() => parseFlags(['--max-queued-bytes', '-1'])).toThrow(
      '--max-queued-bytes must be a non-negative number',
    );
  });

  it('merges webhooks from the file with the URL and secret of the flags and environment', async () => {
    const hooksFile = file(
      'hooks.json',
      JSON.stringify({ webhooks: { url: 'http://file.example/hooks', batchWindow: 50, retryFor: 60000 } }),
    );
    const r = await resolveCli(['start', '--config', hooksFile, '--webhook-url', 'https://flag.example/h'], {
      BAYOU_WEBHOOK_SECRET: 'from-env',
    });
    expect(r.config).toMatchObject({
      webhooks: { url: 'https://flag.example/h', secret: 'from-env', batchWindow: 50, retryFor: 60000 },
    });
    expect(() => parseFlags(['--webhook-url', 'ftp://x'])).toThrow(
      '--webhook-url must be an http:// or https:// URL',
    );
  });

  it('merges proxy hooks one level deep: a flag URL keeps the file timeout and headers of that hook', async () => {
    const proxyFile = file(
      'proxy.json',
      JSON.stringify({
        proxy: {
          connect: { url: 'http://file/connect', timeout: 800, headers: { 'x-key': 'k' } },
          subscribe: 'http://file/subscribe',
          timeout: 3000,
        },
      }),
    );
    const r = await resolveCli(
      ['start', '--config', proxyFile, '--proxy-connect-url', 'http://flag/connect'],
      { BAYOU_PROXY_SUBSCRIBE_URL: 'http://env/subscribe', BAYOU_PROXY_RPC_URL: 'http://env/rpc' },
    );
    expect(r.config.proxy).toEqual({
      connect: { url: 'http://flag/connect', timeout: 800, headers: { 'x-key': 'k' } },
      subscribe: { url: 'http://env/subscribe' },
      rpc: { url: 'http://env/rpc' },
      timeout: 3000,
    });
    expect(() => parseFlags(['--proxy-timeout', '0'])).toThrow('--proxy-timeout must be a positive number');
  });

  it('refuses unreadable, malformed or non-object config files with BAYOU_ERR_CONFIG', async () => {
    const bad = [
      join(dir, 'missing.json'),
      file('bad.json', '{ nope'),
      file('arr.json', '[]'),
      file('c.yaml', 'port: 1'),
      file('throws.mjs', 'throw new Error("boom")'),
    ];
    for (const path of bad) {
      const err = await resolveCli(['start', '--config', path], {}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BayouError);
      expect((err as BayouError).code).toBe('BAYOU_ERR_CONFIG');
    }
  });
});

describe('config file keys, told as flags are', () => {
  const refused = async (config: Record<string, unknown>) => {
    const path = file(`keys-${Math.random().toString(36).slice(2)}.json`, JSON.stringify(config));
    const err = await resolveCli(['start', '--config', path], {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BayouError);
    expect((err as BayouError).code).toBe('BAYOU_ERR_UNKNOWN_OPTION');
    return (err as Error).message.replace(path, '<file>');
  };

  it('names an unknown key and the closest valid one, at the top level and in the groups only bayou start reads', async () => {
    expect(await refused({ prot: 9000 })).toBe(
      'unknown option(s) in config <file>: prot (did you mean port?)',
    );
    expect(await refused({ maxConnectionz: 5, zzzzzzzz: 1 })).toBe(
      'unknown option(s) in config <file>: maxConnectionz (did you mean maxConnections?), zzzzzzzz',
    );
    expect(await refused({ admin: { enabeld: true } })).toBe(
      'unknown option(s) in config <file>: admin: enabeld (did you mean enabled?)',
    );
    expect(await refused({ tls: { key: 'k.pem', crt: 'c.pem' } })).toBe(
      'unknown option(s) in config <file>: tls: crt (did you mean cert?)',
    );
  });

  it("accepts every plugin option, asked of the plugin's resolver, and the flags' own keys", async () => {
    const path = file(
      'every.json',
      JSON.stringify({
        trustClientSession: true,
        historyChannels: 5,
        demoFeed: true,
        demoSymbols: 3,
        redisEngine: {},
      }),
    );
    await expect(resolveCli(['start', '--config', path], {})).resolves.toBeDefined();
  });
});

describe('closest', () => {
  it('suggests typos and prefixes, not unrelated words', () => {
    expect(closest('prot', ['port', 'path'])).toBe('port');
    expect(closest('jwt', ['jwt-secret', 'port'])).toBe('jwt-secret');
    expect(closest('banana', ['port', 'path'])).toBeUndefined();
  });
});
