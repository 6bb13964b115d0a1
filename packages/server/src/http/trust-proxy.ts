/**
 * Fastify's `trustProxy` setting as `createServer` and `bayou start` take it: which peers
 * may tell the client's address (`X-Forwarded-For`) and protocol (`X-Forwarded-Proto`).
 * The forms are Fastify's own — `true`, `false`, a comma-separated string or an array of
 * addresses, CIDR ranges or the names `loopback`, `linklocal`, `uniquelocal`, or a
 * function `(address, hop) => boolean` — checked here once, so a typo in an address is an
 * error at start-up naming the option instead of a proxy that is silently not trusted. A
 * hop count is refused: Fastify 5 cannot check the immediate peer with one, so it trusts
 * nobody (its `request.ip` stays the proxy's), which is never what the count meant.
 */
import proxyAddr from '@fastify/proxy-addr';
import { optionProblem } from '../option-errors.js';

export type TrustProxy = boolean | string | string[] | ((address: string, hop: number) => boolean);

/** What the option is and how to write it, after what is wrong with the value given. */
const invalid: (detail: string) => never = (detail) =>
  optionProblem(
    `option "trustProxy" (--trust-proxy, BAYOU_TRUST_PROXY) ${detail}; use the proxy's addresses, CIDR ranges or loopback/linklocal/uniquelocal separated by commas (e.g. "10.0.0.0/8,127.0.0.1"), true (any peer) or false`,
  );

/** The setting to hand Fastify, or `undefined` when nothing is trusted. Throws on a bad value. */
export function resolveTrustProxy(value: unknown): TrustProxy | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true || typeof value === 'function') return value as TrustProxy;
  if (typeof value === 'number')
    invalid(
      `cannot be a hop count (${value}): Fastify then trusts no peer, since it cannot check the one it talks to`,
    );
  const list =
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : value;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string'))
    invalid(`must be a boolean, a number, a string, an array of strings or a function`);
  if (list.length === 0) invalid('is empty');
  try {
    proxyAddr.compile(list as string[]);
  } catch (err) {
    invalid(`has a bad entry: ${(err as Error).message}`);
  }
  return typeof value === 'string' ? list.join(',') : [...(list as string[])];
}

/** The CLI's reading of `--trust-proxy`: `true`/`false`, a number (refused later, with why), or a list. */
export function parseTrustProxy(raw: string): boolean | number | string {
  const t = raw.trim();
  const lower = t.toLowerCase();
  if (['true', 'yes', 'on'].includes(lower)) return true;
  if (['false', 'no', 'off', ''].includes(lower)) return false;
  if (/^\d+$/.test(t)) return Number(t);
  return t;
}
