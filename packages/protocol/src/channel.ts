/**
 * Channel names: grammar, kinds, wildcard matching and the expansion of a channel into
 * every pattern that matches it (what a subscription index looks up on publish).
 *
 * Grammar (Bayeux 1.0 §2.2, with `.` and `+` accepted as CometD does): `/seg(/seg)*`,
 * a segment is one or more of `A-Z a-z 0-9 - _ ! ~ ( ) $ @ . +`; a pattern may end in
 * `/*` (exactly one more segment) or `/**` (one or more segments).
 */

export type ChannelKind = 'meta' | 'service' | 'broadcast';

const SEGMENT = /^[A-Za-z0-9\-_!~()$@.+]+$/;

export interface ChannelInfo {
  kind: ChannelKind;
  /** `null` for a plain channel, `'*'` or `'**'` for a pattern. */
  wildcard: '*' | '**' | null;
}

/**
 * Parses a channel name or pattern; returns `null` when it breaks the grammar.
 * Wildcards are allowed only as the last segment.
 */
export function parseChannel(name: unknown): ChannelInfo | null {
  if (typeof name !== 'string' || name.length < 2 || name.length > 1024 || name.charCodeAt(0) !== 47) {
    return null;
  }
  const segments = name.split('/');
  let wildcard: ChannelInfo['wildcard'] = null;
  for (let i = 1; i < segments.length; i++) {
    const seg = segments[i] as string;
    if (seg === '*' || seg === '**') {
      if (i !== segments.length - 1) return null;
      wildcard = seg;
    } else if (!SEGMENT.test(seg)) {
      return null;
    }
  }
  const first = segments[1];
  if (wildcard !== null && segments.length === 2) {
    // `/*` and `/**` are valid patterns over broadcast channels.
    return { kind: 'broadcast', wildcard };
  }
  const kind: ChannelKind = first === 'meta' ? 'meta' : first === 'service' ? 'service' : 'broadcast';
  return { kind, wildcard };
}

export function isValidChannel(name: unknown): name is string {
  return parseChannel(name) !== null;
}

export function channelKind(name: string): ChannelKind {
  if (name.startsWith('/meta/')) return 'meta';
  if (name.startsWith('/service/')) return 'service';
  return 'broadcast';
}

export function isWildcard(name: string): boolean {
  return name.endsWith('/*') || name.endsWith('/**');
}

/** Whether `pattern` (a channel or a wildcard pattern) matches the plain channel `channel`. */
export function matches(pattern: string, channel: string): boolean {
  if (pattern === channel) return true;
  if (pattern.endsWith('/**')) {
    const prefix = pattern.slice(0, -2);
    return channel.length > prefix.length && channel.startsWith(prefix);
  }
  if (pattern.endsWith('/*')) {
    const prefix = pattern.slice(0, -1);
    return (
      channel.length > prefix.length &&
      channel.startsWith(prefix) &&
      channel.indexOf('/', prefix.length) === -1
    );
  }
  return false;
}

/**
 * Every name a subscription could have that matches `channel`: the channel itself, its
 * parent's `/*`, and `/**` at every ancestor. `/a/b/c` → `/a/b/c`, `/a/b/*`, `/a/b/**`,
 * `/a/**`, `/**`. Cost is proportional to the depth, never to the number of subscribers.
 */
export function expandChannel(channel: string): string[] {
  const out = [channel];
  let end = channel.lastIndexOf('/');
  if (end < 0) return out;
  out.push(channel.slice(0, end + 1) + '*');
  while (end >= 0) {
    out.push(channel.slice(0, end + 1) + '**');
    end = end === 0 ? -1 : channel.lastIndexOf('/', end - 1);
  }
  return out;
}
