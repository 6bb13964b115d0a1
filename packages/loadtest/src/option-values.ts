/**
 * Parsers of the option values that need more than a number: headers, the handshake
 * extension, the channel prefix, durations and address ranges. Each throws a
 * LoadtestError naming the flag and what it takes.
 */
import { EXT_AUTH } from '@bayou/protocol';
import { LoadtestError, LoadtestErrors } from './errors.js';

/** The generator writes these itself; `--header` may not set them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'cookie',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  // The EventSource drivers send `Accept: text/event-stream`; a second Accept would clash.
  'accept',
]);

/** Parses one `--header name:value`. */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon < 0 ? '' : text.slice(0, colon).trim();
  const value = colon < 0 ? '' : text.slice(colon + 1).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(value)) {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `--header needs name:value, got ${text}`);
  }
  if (RESERVED_HEADERS.has(name.toLowerCase())) {
    throw new LoadtestError(
      LoadtestErrors.INVALID_OPTION,
      `--header cannot set ${name}: the generator sets it${name.toLowerCase() === 'accept' ? ' (text/event-stream on an EventSource, */* otherwise); drop this --header' : ''}`,
    );
  }
  return [name, value];
}

/** `--header` values as a header map (a repeated name keeps its last value). */
export function headerMap(headers: readonly string[]): Record<string, string> {
  return Object.fromEntries(headers.map(parseHeader));
}

/** `ext` with `auth.token` set to `token` (Bayou's token extension), the rest kept. */
export function withToken(ext: Record<string, unknown> | null, token: string): Record<string, unknown> {
  const auth = ext?.[EXT_AUTH];
  return { ...ext, [EXT_AUTH]: { ...(typeof auth === 'object' && auth !== null ? auth : {}), token } };
}

export function parseExt(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `--handshake-ext is not JSON: ${raw}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LoadtestError(
      LoadtestErrors.INVALID_OPTION,
      `--handshake-ext must be a JSON object, got ${raw}`,
    );
  }
  return value as Record<string, unknown>;
}

export function checkPrefix(prefix: string): string {
  if (prefix === '') return prefix;
  const segments = prefix.split('/').slice(1);
  if (
    !prefix.startsWith('/') ||
    segments.some((s) => !/^[A-Za-z0-9_.~-]+$/.test(s)) ||
    segments[0] === 'meta' ||
    segments[0] === 'service'
  ) {
    throw new LoadtestError(
      LoadtestErrors.INVALID_OPTION,
      `--channel-prefix is /segment[/segment…] (letters, digits, - _ . ~; not /meta or /service), got ${prefix}`,
    );
  }
  return prefix;
}

/** Parses '10ms', '5s', '2m', '1h' or a bare number of milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `not a duration: ${text}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms'] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/** Expands '127.0.0.2-127.0.0.9,10.0.0.1' into every address of the ranges (IPv4). */
export function parseAddresses(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',').filter((p) => p.trim() !== '')) {
    const [from, to] = part.trim().split('-');
    const a = ipv4ToInt(from!);
    const b = to === undefined ? a : ipv4ToInt(to);
    if (b < a || b - a > 65_535) throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `bad range ${part}`);
    for (let n = a; n <= b; n++) out.push([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'));
  }
  return out;
}

function ipv4ToInt(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `not an IPv4 address: ${ip}`);
  }
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/** Every client (and the broadcast's publisher) needs a source port ≤ 65535 on its address. */
export function checkLocalPorts(base: number, clients: number, addresses: number): void {
  if (base === 0) return;
  const last = base + Math.floor(clients / Math.max(1, addresses));
  if (base < 1024 || last > 65535)
    throw new LoadtestError(
      LoadtestErrors.INVALID_OPTION,
      `--local-port-base ${base} gives ports up to ${last}: choose a base ≥ 1024 with base + clients / addresses ≤ 65535, or add --local-addresses`,
    );
}
