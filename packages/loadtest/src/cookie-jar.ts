/**
 * A per-client cookie jar that keeps cookies the way a browser does for one origin: each
 * `Set-Cookie` stores (or, with Max-Age ≤ 0 or a past Expires, deletes) a name=value with
 * its Path, and `header(path)` returns the Cookie header for a request to that path. Domain
 * attributes are ignored: a load test talks to one host, so every cookie is host-only.
 */
interface Cookie {
  value: string;
  path: string;
  /** ms since the epoch; Infinity for a session cookie. */
  expires: number;
}

export class CookieJar {
  private readonly cookies = new Map<string, Cookie>();

  /** Takes a response's `set-cookie` header (node:http gives an array, or undefined). */
  store(setCookie: string | readonly string[] | undefined): void {
    if (!setCookie) return;
    for (const line of typeof setCookie === 'string' ? [setCookie] : setCookie) this.storeOne(line);
  }

  private storeOne(line: string): void {
    const [pair = '', ...attributes] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq <= 0) return;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    let path = '/';
    let expires = Number.POSITIVE_INFINITY;
    for (const attribute of attributes) {
      const at = attribute.indexOf('=');
      const key = (at < 0 ? attribute : attribute.slice(0, at)).trim().toLowerCase();
      const v = at < 0 ? '' : attribute.slice(at + 1).trim();
      if (key === 'path' && v.startsWith('/')) path = v;
      else if (key === 'max-age' && /^-?\d+$/.test(v)) expires = Date.now() + Number(v) * 1000;
      else if (key === 'expires' && expires === Number.POSITIVE_INFINITY) {
        const t = Date.parse(v);
        if (Number.isFinite(t)) expires = t;
      }
    }
    if (expires <= Date.now()) this.cookies.delete(name);
    else this.cookies.set(name, { value, path, expires });
  }

  /** The Cookie header for a request to `path`, or undefined when no cookie applies. */
  header(path: string): string | undefined {
    let out: string | undefined;
    const t = Date.now();
    for (const [name, c] of this.cookies) {
      if (c.expires <= t) {
        this.cookies.delete(name);
        continue;
      }
      if (!pathMatches(path, c.path)) continue;
      out = out === undefined ? `${name}=${c.value}` : `${out}; ${name}=${c.value}`;
    }
    return out;
  }
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}
