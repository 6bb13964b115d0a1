/**
 * Deltas on plain channels (the server's `ext.delta`, see `@bayou/protocol`'s `EXT_DELTA`):
 * a subscribe made with `{ delta: true }` asks for them; every message on that channel
 * then names itself (`ext.delta.id`) and a delta names its base (`ext.delta.from`) and
 * carries a JSON Merge Patch of `data`. A delta is applied only to the message it names:
 * after a lost one (a cut connection, a transport switch) it is dropped and the channel
 * is subscribed again, and the server sends the next message whole. Handlers always get
 * whole messages. A separate entry, `@bayou/client/deltas`:
 *
 *   import { deltas } from '@bayou/client/deltas';
 *   const client = new BayouClient(url, { deltas });
 *   client.subscribe('/prices/ACME', onPrice, { delta: true });
 */
import { DELTA_FORMAT, EXT_DELTA, META_HANDSHAKE, META_SUBSCRIBE } from '@bayou/protocol';
import type { DeltaDecoder, DeltaSupport } from './delta-support.js';
import type { Message } from './types.js';

type DeltaExt = { id?: unknown; from?: unknown } | undefined;

export class Deltas implements DeltaDecoder {
  /**
   * The channels that want deltas, each with its last message (`[id, data]`: what the next
   * delta must name), or `null` when the next one must come whole.
   */
  readonly last = new Map<string, [unknown, unknown] | null>();

  /** `resync(channel)` subscribes to `channel` again (the next message comes whole). */
  constructor(private readonly resync: (channel: string) => void) {}

  outgoing(message: Message): Message {
    const { channel, subscription } = message;
    if (channel === META_HANDSHAKE) for (const c of this.last.keys()) this.last.set(c, null);
    if (channel !== META_SUBSCRIBE || !this.last.has(subscription as string)) return message;
    // The server starts the channel afresh: whatever came before is no base.
    this.last.set(subscription as string, null);
    return { ...message, ext: { ...message.ext, [EXT_DELTA]: DELTA_FORMAT } };
  }

  incoming(message: Message): Message | null {
    const { channel, ext } = message;
    if (message.successful !== undefined || !this.last.has(channel)) return message;
    const d = ext?.[EXT_DELTA] as DeltaExt;
    let data = message.data;
    if (d?.from !== undefined) {
      const base = this.last.get(channel);
      if (base?.[0] !== d.from) {
        // Not the base it was made against: never applied; the next message comes whole.
        this.last.set(channel, null);
        this.resync(channel);
        return null;
      }
      data = applyMergePatch(base[1], data);
      message = { ...message, data };
    }
    // An unnamed message (recovered, or on a channel without history) is no base.
    this.last.set(channel, typeof d?.id === 'string' ? [d.id, data] : null);
    return message;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386: `patch` applied to a copy of `base`. */
export function applyMergePatch(base: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(base) ? { ...base } : {};
  for (const key in patch) {
    if (patch[key] === null) delete out[key];
    else if (key !== '__proto__') out[key] = applyMergePatch(out[key], patch[key]);
  }
  return out;
}

/** The `deltas` option of `BayouClient`. */
export const deltas: DeltaSupport = (subscriptions, resume) =>
  new Deltas((channel) => {
    const entry = subscriptions.get(channel);
    if (entry?.confirmed) {
      entry.confirmed = false;
      resume();
    }
  });
