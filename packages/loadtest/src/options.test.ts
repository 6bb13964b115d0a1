import { describe, expect, it } from 'vitest';
import { LoadtestErrors } from './errors.js';
import { helpText } from './help-text.js';
import { headerMap, parseAddresses, parseDuration } from './option-values.js';
import { DEFAULTS, flagName, OPTION_SPECS, parseArgs, redactOptions, resolveOptions } from './options.js';

describe('options', () => {
  it('parses durations with units and bare milliseconds', () => {
    expect(parseDuration('10ms')).toBe(10);
    expect(parseDuration('5s')).toBe(5000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('250')).toBe(250);
    expect(() => parseDuration('soon')).toThrow(/duration/);
  });

  it('expands address ranges', () => {
    expect(parseAddresses('127.0.0.2-127.0.0.4')).toEqual(['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    expect(parseAddresses('10.0.0.255-10.0.1.0,127.0.0.1')).toEqual(['10.0.0.255', '10.0.1.0', '127.0.0.1']);
    expect(() => parseAddresses('127.0.0.9-127.0.0.2')).toThrow();
    expect(() => parseAddresses('300.0.0.1')).toThrow(/IPv4/);
  });

  it('takes --local-port-base only when every client gets a port below 65536', () => {
    const addresses = parseAddresses('127.0.0.2-127.0.0.28');
    expect(
      resolveOptions({ clients: 512000, localAddresses: addresses, localPortBase: 10000 }).localPortBase,
    ).toBe(10000);
    expect(() =>
      resolveOptions({ clients: 512000, localAddresses: addresses, localPortBase: 50000 }),
    ).toThrow(/--local-port-base 50000 gives ports up to 68962.*--local-addresses/);
    expect(() => resolveOptions({ clients: 10, localPortBase: 80 })).toThrow(/base ≥ 1024/);
  });

  it('parses a scenario with --flag value, --flag=value and --no-flag', () => {
    const p = parseArgs([
      'chat',
      '--clients',
      '50',
      '--pause=20ms',
      '--transport',
      'long-polling',
      '--no-progress',
    ]);
    expect(p.scenario).toBe('chat');
    expect(p.options).toEqual({ clients: 50, pause: 20, transport: 'long-polling', progress: false });
  });

  it('rejects unknown scenarios, options and bad values with their codes', () => {
    expect(() => parseArgs(['storm'])).toThrow(
      expect.objectContaining({ code: LoadtestErrors.UNKNOWN_SCENARIO }),
    );
    // Every scenario the command takes is named, chaos too (the CLI runs it before parseArgs).
    expect(() => parseArgs(['chaso'])).toThrow('unknown scenario chaso (chat|feed|connections|chaos)');
    expect(() => parseArgs(['chat', '--nope', '1'])).toThrow(
      expect.objectContaining({ code: LoadtestErrors.UNKNOWN_OPTION }),
    );
    expect(() => parseArgs(['chat', '--clients', '-3'])).toThrow(
      expect.objectContaining({ code: LoadtestErrors.INVALID_OPTION }),
    );
    expect(() => parseArgs(['chat', '--transport', 'carrier-pigeon'])).toThrow(/transport/);
  });

  it('takes the streaming transports, and the browser-like client only with them', () => {
    for (const transport of ['streaming', 'eventsource']) {
      const p = parseArgs(['chat', '--transport', transport, '--client', 'browser']);
      expect(resolveOptions(p.options)).toMatchObject({ transport, client: 'browser' });
    }
    expect(() => parseArgs(['chat', '--client', 'firefox'])).toThrow(
      /--client is lean or browser; got firefox/,
    );
    expect(() => resolveOptions({ client: 'browser' })).toThrow(
      expect.objectContaining({
        code: LoadtestErrors.INVALID_OPTION,
        message: expect.stringMatching(/--transport streaming/),
      }),
    );
    expect(() => resolveOptions({ transport: 'smoke-signals' as never })).toThrow(/transport is/);
  });

  it('merges defaults into a frozen object and rejects impossible combinations', () => {
    const o = resolveOptions({ clients: 10 });
    expect(o.clients).toBe(10);
    expect(o.rooms).toBe(DEFAULTS.rooms);
    expect(Object.isFrozen(o)).toBe(true);
    expect(() => resolveOptions({ rooms: 5, roomsPerClient: 6 })).toThrow(/rooms-per-client/);
    expect(() => resolveOptions({ bogus: 1 } as never)).toThrow(/bogus/);
  });

  it('uses the CometD benchmark defaults for chat', () => {
    expect(DEFAULTS).toMatchObject({
      clients: 1000,
      rooms: 100,
      roomsPerClient: 10,
      batches: 1000,
      batchSize: 10,
      messageSize: 50,
      pause: 10,
    });
  });

  it('documents every option with its default in --help', () => {
    const help = helpText();
    for (const spec of OPTION_SPECS) expect(help).toContain(`--${flagName(spec.key)}`);
    expect(OPTION_SPECS.map((s) => s.key).sort()).toEqual(Object.keys(DEFAULTS).sort());
    expect(help).toContain('--pause');
    expect(help).toMatch(/--pause .*\(default 10ms\)/);
    expect(help).toMatch(/--rooms-per-client .*\(default 10\)/);
  });

  it('takes the feed source: publisher by default, demo, nothing else', () => {
    expect(DEFAULTS.source).toBe('publisher');
    expect(parseArgs(['feed', '--source', 'demo']).options).toEqual({ source: 'demo' });
    expect(() => parseArgs(['feed', '--source', 'provider'])).toThrow(/publisher or demo/);
    expect(() => resolveOptions({ source: 'nope' as never })).toThrow(/publisher or demo/);
    // The demo feed's symbols are three letters: AAA … ZZZ.
    expect(resolveOptions({ source: 'demo', subjects: 17_576 }).subjects).toBe(17_576);
    expect(() => resolveOptions({ source: 'demo', subjects: 17_577 })).toThrow(/17576/);
    expect(helpText()).toMatch(/--source .*demo.*\[feed\] \(default publisher\)/);
  });
});

describe('options for servers that need credentials, and per-scenario help', () => {
  it('takes repeatable --header name:value and refuses malformed or reserved ones', () => {
    const { options } = parseArgs(['chat', '--header', 'Authorization: Bearer x', '--header=X-A:1']);
    expect(options.headers).toEqual(['Authorization:Bearer x', 'X-A:1']);
    expect(headerMap(options.headers ?? [])).toEqual({ Authorization: 'Bearer x', 'X-A': '1' });
    expect(() => parseArgs(['chat', '--header', 'no-colon'])).toThrow(/name:value/);
    expect(() => parseArgs(['chat', '--header', 'bad name: x'])).toThrow(/name:value/);
    expect(() => parseArgs(['chat', '--header', 'Host: x'])).toThrow(/generator sets it/);
    expect(() => parseArgs(['chat', '--header', 'Accept: application/json'])).toThrow(
      /cannot set Accept: the generator sets it \(text\/event-stream on an EventSource.*drop this --header/,
    );
  });

  it('takes --handshake-ext as a JSON object', () => {
    expect(parseArgs(['chat', '--handshake-ext', '{"token":"t"}']).options.handshakeExt).toEqual({
      token: 't',
    });
    expect(() => parseArgs(['chat', '--handshake-ext', '{nope'])).toThrow(/not JSON/);
    expect(() => parseArgs(['chat', '--handshake-ext', '[1]'])).toThrow(/JSON object/);
  });

  it('sends --token as ext.auth.token, kept beside the rest of --handshake-ext, and hides it in reports', () => {
    const { options } = parseArgs(['chat', '--token', 'jwt1', '--handshake-ext', '{"auth":{"x":1},"y":2}']);
    const resolved = resolveOptions(options);
    expect(resolved.handshakeExt).toEqual({ auth: { x: 1, token: 'jwt1' }, y: 2 });
    expect(resolveOptions({ token: 'jwt2' }).handshakeExt).toEqual({ auth: { token: 'jwt2' } });
    expect(JSON.stringify(redactOptions(resolved))).not.toContain('jwt1');
  });

  it('takes --channel-prefix as channel segments, not /meta, not with --source demo', () => {
    expect(parseArgs(['chat', '--channel-prefix', '/lt/a-1']).options.channelPrefix).toBe('/lt/a-1');
    for (const bad of ['lt', '/lt/', '/meta', '/service/x', '/a b', '/a/*'])
      expect(() => parseArgs(['chat', '--channel-prefix', bad]), bad).toThrow(/--channel-prefix/);
    expect(() => resolveOptions({ source: 'demo', channelPrefix: '/lt' })).toThrow(/does not apply/);
  });

  it('prints one scenario and only its options with `<scenario> --help`', () => {
    const chat = helpText('chat');
    expect(chat).toMatch(/^usage: bayou-loadtest chat \[options\]/);
    expect(chat).toContain('--rooms-per-client');
    expect(chat).toContain('--header');
    expect(chat).not.toContain('--subjects-per-client');
    const feed = helpText('feed');
    expect(feed).toContain('--source');
    expect(feed).not.toContain('--rooms');
    expect(helpText('connections')).toContain('--hold');
    expect(helpText()).toContain('<chat|feed|connections|chaos> --help');
  });
});
