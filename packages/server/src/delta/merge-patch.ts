/**
 * JSON Merge Patch (RFC 7386) between two messages' `data`: the patch that turns `base`
 * into `next`. Objects are patched key by key (recursively), anything else is replaced;
 * a key gone from `next` is `null` in the patch. A `null` value in `next` cannot be told
 * from a removal, so such a pair has no patch (`undefined`): the message goes whole.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const PROTO = '__proto__';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The merge patch from `base` to `next` (both objects), or `undefined` when there is none. */
export function mergePatch(base: unknown, next: unknown): JsonObject | undefined {
  if (!isObject(base) || !isObject(next)) return undefined;
  const patch: JsonObject = {};
  for (const key in next) {
    const to = next[key] as Json;
    // A `__proto__` key would set the patch's prototype: such data goes whole.
    if (to === null || key === PROTO) return undefined;
    if (!Object.hasOwn(base, key)) {
      if (unpatchable(to)) return undefined;
      patch[key] = to;
      continue;
    }
    const from = base[key] as Json;
    if (from === to) continue;
    if (isObject(from) && isObject(to)) {
      const inner = mergePatch(from, to);
      if (inner === undefined) return undefined;
      if (Object.keys(inner).length > 0) patch[key] = inner;
      continue;
    }
    if (typeof to === 'object' && JSON.stringify(from) === JSON.stringify(to)) continue;
    if (isObject(to) && unpatchable(to)) return undefined;
    patch[key] = to;
  }
  for (const key in base) {
    if (key === PROTO) return undefined;
    if (!Object.hasOwn(next, key)) patch[key] = null;
  }
  return patch;
}

/**
 * Whether an object holds, at any depth of objects, a `null` (a patch would read it as a
 * removal) or a `__proto__` key (applying it would set a prototype, so a client skips it).
 */
function unpatchable(value: Json): boolean {
  if (value === null) return true;
  if (!isObject(value)) return false;
  for (const key in value) if (key === PROTO || unpatchable(value[key] as Json)) return true;
  return false;
}

/** `patch` applied to `base` (RFC 7386), as a client does; `base` is left as it was. */
export function applyMergePatch(base: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(base) ? { ...base } : {};
  for (const key in patch) {
    if (key === PROTO) continue;
    const value = patch[key] as Json;
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value) as Json;
  }
  return out;
}
