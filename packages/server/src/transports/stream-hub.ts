/**
 * What the streams of one endpoint (`streaming` and `eventsource`) share: the set of open
 * streams and one sweep (every `sweepInterval`) that writes heartbeats into the silent
 * ones and recycles those past `streamMaxAge`; recycling past `streamMaxBytes` happens
 * after the flush that crossed it. A stream's state is its `StreamLink`, held by its
 * session (as its carrier and in its `extensionState`) and by the open set until the
 * response ends; an extension ends the stream when its session ends (a disconnect, an
 * expiry, a shutdown).
 */
import type { Extension } from '../bayeux/extensions.js';
import { connectReplyJson } from '../kernel/connects.js';
import type { ResolvedOptions } from '../options.js';
import type { ExtensionSession, Session } from '../session/session.js';
import type { StreamHost, StreamKind, StreamLink } from './stream-link.js';
import type { TransportKernel } from './transport-kernel.js';

export type StreamHubOptions = Pick<
  ResolvedOptions,
  'timeout' | 'sweepInterval' | 'streamMaxBytes' | 'streamMaxAge' | 'maxQueuedMessages'
>;

/** The last frame of a recycled `streaming` response: open the next one at once. */
const RECYCLE_ADVICE = '{"reconnect":"retry","interval":0}';

/**
 * What a recycled stream ends with: a `streaming` client is told to open the next one at
 * once; a browser's EventSource reopens by itself (after `retry`), so it gets nothing.
 */
export function recycleFrame(kind: StreamKind, clientId: string, marker?: string): string | undefined {
  if (kind === 'eventsource') return undefined;
  const tail = marker === undefined ? '' : `,${marker}`;
  return `[${connectReplyJson(undefined, clientId, RECYCLE_ADVICE)}${tail}]\n`;
}

/**
 * The streams' extension (stage `protocol`): ends a session's stream with the session. Built
 * by the composition root with the node's other extensions, handed to the hub (the key of
 * each session's stream in its `extensionState`).
 */
export class StreamsExtension implements Extension {
  readonly name = 'streams';
  readonly stage = 'protocol';

  removed(session: ExtensionSession): void {
    if (!session.carrierKind.keepsSession) return;
    (session.extensionState.get(this) as StreamLink | undefined)?.end();
  }
}

export class StreamHub implements StreamHost {
  readonly maxBytes: number;
  readonly maxMessages: number;
  clock = Date.now();
  private readonly open = new Set<StreamLink>();
  /** Relayed streams a shutdown recycles, until each ended (`drainRelays`). */
  private relaysLeft: { readonly links: Set<StreamLink>; readonly resolve: () => void } | null = null;
  private readonly timer: NodeJS.Timeout;
  constructor(
    private readonly kernel: TransportKernel,
    private readonly options: StreamHubOptions,
    /** Ends a stream with its session; the key of its stream in a session's `extensionState`. */
    readonly extension: StreamsExtension,
  ) {
    this.maxBytes = options.streamMaxBytes;
    this.maxMessages = Math.max(1, Math.floor(options.maxQueuedMessages / 2));
    this.timer = setInterval(() => this.sweep(Date.now()), options.sweepInterval);
    this.timer.unref();
  }

  /** Open streams by type, for the metrics. */
  counts(): { streaming: number; eventsource: number } {
    let eventsource = 0;
    for (const link of this.open) if (link.format === 'eventsource') eventsource++;
    return { streaming: this.open.size - eventsource, eventsource };
  }

  /**
   * `link` now carries `session` (bound by a connect or `bindStream`): it is tracked, and
   * an older stream of the same session ends.
   */
  attach(link: StreamLink, session: Session): void {
    link.session = session;
    this.open.add(link);
    const state = session.extensionState;
    const older = state.get(this.extension) as StreamLink | undefined;
    state.set(this.extension, link);
    if (older !== undefined && older !== link) older.end();
  }

  /** A stream fed from another node (`cluster/stream-relay.ts`): heartbeats and recycling apply. */
  track(link: StreamLink): void {
    this.open.add(link);
  }

  ended(link: StreamLink): void {
    this.open.delete(link);
    link.relay?.closed();
    const left = this.relaysLeft;
    if (left?.links.delete(link) === true && left.links.size === 0) left.resolve();
    const session = link.session;
    if (session === null) return;
    if (session.carrier === link) this.kernel.connects.carrierClosed(session, link);
    if (session.extensionState.get(this.extension) === link) session.extensionState.delete(this.extension);
  }

  full(link: StreamLink): void {
    // After the flush that wrote it: the session's queue is consistent again then.
    queueMicrotask(() => this.recycle(link));
  }

  /** Ends `link` so that its client opens the next stream; what is queued waits for it. */
  recycle(link: StreamLink): void {
    if (link.done || link.recycling) return;
    link.recycling = true;
    if (link.relay !== null) link.relay.recycle();
    else if (link.session === null) link.finish(undefined);
    else {
      // A numbered frame, as every frame of a numbered session is (docs/streaming.md).
      const marker =
        link.format === 'streaming' ? this.kernel.outbound.emptyFrameMarker(link.session) : undefined;
      link.finish(recycleFrame(link.format, link.session.id, marker));
    }
  }

  sweep(now: number): void {
    this.clock = now;
    const { streamMaxAge, timeout } = this.options;
    for (const link of this.open) {
      const session = link.session;
      // A connect on another carrier (a newer stream relayed from another node) took its session.
      if (session !== null && session.carrier !== link) link.end();
      else if (now - link.openedAt >= streamMaxAge) this.recycle(link);
      else if (now - link.lastWrite >= timeout) link.heartbeat(now);
    }
  }

  /**
   * Shutdown, before `close`: each stream relayed from another node is recycled — the
   * connect held for it there answered now, what that answer carries written, then the
   * stream ended as a recycle — so that nothing in flight goes down with it (a client
   * without acknowledgements, Faye, would never get it again). Resolves once they all
   * ended, or after `ms`.
   */
  drainRelays(ms: number): Promise<void> {
    const links = new Set([...this.open].filter((link) => link.relay !== null && !link.done));
    if (links.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.relaysLeft = { links, resolve: done };
      for (const link of [...links]) this.recycle(link);
    }).finally(() => {
      this.relaysLeft = null;
    });
  }

  /** The server closes: every stream ends (sessions ended first answer their clients). */
  close(): void {
    clearInterval(this.timer);
    for (const link of [...this.open]) link.end();
  }
}
