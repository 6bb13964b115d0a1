/**
 * How record updates look on the wire, per kind of subscriber:
 * - `plain` (CometD, Faye, any Bayeux client): `{channel, data: {field: value}}` — the
 *   snapshot holds every field, a delta only the changed ones;
 * - `tagged` (`@bayou/client` that asked for records): the same plus `ext: {r: 's'|'d'}`,
 *   so the client tells a snapshot (replace the image) from a delta (merge);
 * - `compact` (negotiated in the handshake): `{channel: '/~r', data: [alias, {id: value},
 *   's'|'d', defs?, subject?]}` where `alias` stands for the subject and small ids for the
 *   field names; a snapshot carries `defs` for all its fields and the subject name, a delta
 *   carries `defs` only for ids its subscribers have not seen yet.
 * Aliases and field ids are server-wide, so one encoding serves every subscriber.
 */

import {
  BAYOU_EXT,
  COMPACT_RECORD_CHANNEL,
  EXT_COMPACT,
  EXT_RECORD_KIND,
  EXT_RECORDS,
} from '@bayou/protocol';

export type RecordEncoding = 'plain' | 'tagged' | 'compact';
export type RecordKind = 's' | 'd';

/** Server-wide dictionaries of subject aliases and field ids. */
export class CompactDictionary {
  private readonly aliases = new Map<string, number>();
  private readonly fieldIds = new Map<string, number>();

  alias(subject: string): number {
    let a = this.aliases.get(subject);
    if (a === undefined) {
      a = this.aliases.size;
      this.aliases.set(subject, a);
    }
    return a;
  }

  /** `fields` keyed by their ids (created on first use). */
  ids(fields: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(fields)) {
      let id = this.fieldIds.get(name);
      if (id === undefined) {
        id = this.fieldIds.size;
        this.fieldIds.set(name, id);
      }
      out[id] = fields[name];
    }
    return out;
  }

  /** Names of the fields of `fields` that pass `want`, keyed by id. */
  defs(fields: Record<string, unknown>, want: (name: string) => boolean): Record<string, string> | null {
    let defs: Record<string, string> | null = null;
    for (const name of Object.keys(fields)) {
      if (!want(name)) continue;
      defs ??= {};
      defs[this.fieldIds.get(name) as number] = name;
    }
    return defs;
  }
}

/** Whether a compact message must define (name) a field for its receivers. */
export type NeedsDefinition = (name: string) => boolean;
export const DEFINE_ALL: NeedsDefinition = () => true;

export function encodeRecord(
  encoding: RecordEncoding,
  subject: string,
  fields: Record<string, unknown>,
  kind: RecordKind,
  dict: CompactDictionary,
  needsDefinition: NeedsDefinition,
): string {
  if (encoding === 'plain') return JSON.stringify({ channel: subject, data: fields });
  if (encoding === 'tagged')
    return JSON.stringify({ channel: subject, data: fields, ext: { [EXT_RECORD_KIND]: kind } });
  const ids = dict.ids(fields);
  const defs = dict.defs(fields, needsDefinition);
  const data: unknown[] = [dict.alias(subject), ids, kind];
  // A snapshot also names its subject, so the client can map the alias.
  if (kind === 's') data.push(defs ?? {}, subject);
  else if (defs !== null) data.push(defs);
  return JSON.stringify({ channel: COMPACT_RECORD_CHANNEL, data });
}

/** How a session takes records, from what its client asked in the handshake `ext`. */
export function recordEncoding(session: {
  handshakeExt: Record<string, unknown> | undefined;
}): RecordEncoding {
  const bayou = session.handshakeExt?.[BAYOU_EXT] as Record<string, unknown> | undefined;
  if (bayou === undefined || bayou === null || typeof bayou !== 'object') return 'plain';
  if (bayou[EXT_COMPACT] === true) return 'compact';
  return bayou[EXT_RECORDS] === true ? 'tagged' : 'plain';
}
