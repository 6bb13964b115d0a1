/**
 * How the sources of `bayou start` (flags, environment, config file) combine: key by key at
 * every depth, the first source that sets a value winning, as the README says.
 */
/**
 * An option group: a plain object (`admin`, `tokens`, `limits`, `proxy.connect`…). Arrays,
 * functions, Buffers and class instances (a metrics `Registry`) are values, taken whole.
 */
export function isPlain(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A proxy hook given as a bare URL string is `{ url }`, so a flag's URL keeps the file's timeout. */
function asGroup(path: string, v: unknown): unknown {
  return typeof v === 'string' && /^proxy\.[^.]+$/.test(path) ? { url: v } : v;
}

function mergeAt(
  path: string,
  low: Record<string, unknown>,
  high: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...low };
  for (const [key, raw] of Object.entries(high)) {
    if (raw === undefined) continue;
    const at = path === '' ? key : `${path}.${key}`;
    const value = asGroup(at, raw);
    const before = asGroup(at, out[key]);
    if (isPlain(value) && isPlain(before)) out[key] = mergeAt(at, before, value);
    // `demoFeed: true` (the flag) over the file's `{ symbols, rate }` turns on those options.
    else if (value === true && isPlain(before)) out[key] = before;
    else out[key] = raw;
  }
  // A higher `tokens.secret` or `tokens.jwksUrl` replaces the other kind of key too.
  if (path === 'tokens' || path === 'auth.tokens') {
    if (high.secret !== undefined && high.jwksUrl === undefined) delete out.jwksUrl;
    if (high.jwksUrl !== undefined && high.secret === undefined) delete out.secret;
  }
  return out;
}

/**
 * `high` over `low`, key by key at every depth: a value set in `high` wins, and every option
 * group (`admin`, `tokens`, `tls`, `limits`, `proxy.connect`…) keeps the keys only `low`
 * sets — `--admin` on the command line keeps the password from the environment.
 */
export function mergeLayers(
  low: Record<string, unknown>,
  high: Record<string, unknown>,
): Record<string, unknown> {
  return mergeAt('', low, high);
}
