/** Helpers both transports share: origin checks and the request summary for hooks. */
import type { IncomingMessage } from 'node:http';
import type { RequestInfo, TransportName } from '../options.js';

export function originAllowed(allowed: readonly string[], origin: string | undefined): boolean {
  // Non-browser clients send no Origin; the check protects browsers from foreign pages.
  if (origin === undefined || allowed.includes('*')) return true;
  return allowed.includes(origin);
}

export function requestInfo(transport: TransportName, raw: IncomingMessage): RequestInfo {
  return { transport, raw, remoteAddress: raw.socket.remoteAddress };
}

export function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
