/**
 * Reading an HTTP transport's request headers: the browser cookie. (Bodies are read by
 * `body-reader.ts`, CORS is `origin-guard.ts`.)
 */

/** The value of cookie `name` in a `Cookie` header, or `null`; scans without splitting. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  let from = 0;
  for (;;) {
    const at = header.indexOf(name, from);
    if (at < 0) return null;
    from = at + name.length;
    let before = at - 1;
    while (before >= 0 && (header[before] === ' ' || header[before] === '\t')) before--;
    if (before >= 0 && header[before] !== ';') continue;
    let eq = from;
    while (header[eq] === ' ' || header[eq] === '\t') eq++;
    if (header[eq] !== '=') continue;
    const end = header.indexOf(';', eq);
    return header.slice(eq + 1, end < 0 ? header.length : end).trim() || null;
  }
}
