/** The streaming connection types an endpoint offers (`streaming`, `eventsource`), over one hub. */
import { createStreamRelay } from '../cluster/stream-relay.js';
import type { ResolvedOptions } from '../options.js';
import { EventSourceTransport } from './event-source.js';
import type { OriginGuard } from './origin-guard.js';
import { StreamHub, type StreamsExtension } from './stream-hub.js';
import { StreamingTransport } from './streaming.js';
import type { TransportKernel } from './transport-kernel.js';

export interface Streams {
  readonly hub: StreamHub;
  readonly streaming: StreamingTransport | null;
  readonly eventSource: EventSourceTransport | null;
}

/** Whether `options.transports` names a streaming type (`streaming`, `eventsource`). */
export function wantsStreams(options: Pick<ResolvedOptions, 'transports'>): boolean {
  return options.transports.includes('streaming') || options.transports.includes('eventsource');
}

/** The streams `options.transports` asks for, or `null` when it names neither type. */
export function createStreams(
  kernel: TransportKernel,
  options: ResolvedOptions,
  origins: OriginGuard,
  /** The streams' extension, registered with the node's others (`null` without streams). */
  extension: StreamsExtension | null,
): Streams | null {
  const streaming = options.transports.includes('streaming');
  const eventSource = options.transports.includes('eventsource');
  if ((!streaming && !eventSource) || extension === null) return null;
  const hub = new StreamHub(kernel, options, extension);
  // A stream of another node's session is relayed to its owner (cluster/stream-relay.ts).
  const relay = createStreamRelay(kernel, options.timeout);
  return {
    hub,
    streaming: streaming ? new StreamingTransport(kernel, hub, relay) : null,
    eventSource: eventSource ? new EventSourceTransport(kernel, hub, options, relay, origins) : null,
  };
}
