/**
 * A message's path as OpenTelemetry spans, when the application installed an SDK before
 * the node was built: a publish given a W3C `traceparent` (publish `ext`, the publish
 * API's header, `bayou.publish`'s option) gets a `bayou.publish` span under that parent,
 * a `bayou.engine` span under it for the engine's part (its context is what the engine
 * carries to every node: `Publication.trace`), and on each node that delivers it a
 * `bayou.deliver` span under that, ended once the flush that wrote it to the sockets ran.
 *
 * Without an SDK (`@opentelemetry/api`'s global provider has no delegate) the node gets no
 * `MessageTracing` at all: the publish path tests one `null`, nothing per message.
 */
import { createRequire } from 'node:module';
import { EXT_TRACEPARENT, isTraceparent } from '@bayou/protocol';
import type * as OtelApi from '@opentelemetry/api';
import type { Span, Tracer } from '@opentelemetry/api';
import type { Publication } from '../engine/engine.js';

/**
 * Where `@opentelemetry/api` (major version 1) keeps what was registered; an SDK that
 * registered a tracer provider wrote `trace` there. Until then the API is not even loaded
 * (0.65 MB of heap in every process, for nothing without an SDK).
 */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');
let loaded: typeof OtelApi | undefined;
/** The API, loaded on first use. */
function otel(): typeof OtelApi {
  loaded ??= createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi;
  return loaded;
}

const TRACER = '@bayou/server';
/** How a delivered message names its delivery span: `"traceparent":"` in its `ext`. */
const TRACE_KEY = `"${EXT_TRACEPARENT}":"`;

/** Whether an OpenTelemetry SDK is registered now (asked once, when a node is built). */
export function tracingInstalled(): boolean {
  const registered = (globalThis as { [OTEL_GLOBAL]?: { trace?: unknown } })[OTEL_GLOBAL];
  if (registered?.trace === undefined) return false;
  const { trace, ProxyTracerProvider } = otel();
  const provider = trace.getTracerProvider();
  // Another copy of the API hands out its own proxy: take that as installed (spans no-op if not).
  if (!(provider instanceof ProxyTracerProvider)) return true;
  return provider.getDelegateTracer(TRACER) !== undefined;
}

/** `00-<trace id>-<span id>-<flags>` of a span's context. */
function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The remote parent context a `traceparent` names (checked with `isTraceparent` before). */
function parentContext(traceparent: string) {
  const { trace, ROOT_CONTEXT } = otel();
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: traceparent.slice(3, 35),
    spanId: traceparent.slice(36, 52),
    traceFlags: Number.parseInt(traceparent.slice(53, 55), 16),
    isRemote: true,
  });
}

export class MessageTracing {
  private readonly tracer: Tracer;
  /** Delivery spans waiting for this turn's flush to have written their messages. */
  private delivered: Span[] = [];
  private readonly endDelivered = (): void => {
    const spans = this.delivered;
    this.delivered = [];
    for (const span of spans) span.end();
  };

  constructor(
    private readonly nodeId: string,
    /** What the engine is, for the engine span (`memory`, `redis`). */
    private readonly engineKind: string,
  ) {
    this.tracer = otel().trace.getTracer(TRACER);
  }

  /**
   * Runs `send` (the engine's publish, given the traceparent to carry) inside a publish
   * span and an engine span under `traceparent`; both end when the engine has the message.
   */
  publish<T>(
    channel: string,
    traceparent: string,
    send: (carried: string) => T | Promise<T>,
  ): T | Promise<T> {
    const { context, SpanKind, SpanStatusCode, trace } = otel();
    const attributes = { 'messaging.system': 'bayou', 'messaging.destination.name': channel };
    const publish = this.tracer.startSpan(
      'bayou.publish',
      { kind: SpanKind.PRODUCER, attributes: { ...attributes, 'bayou.node': this.nodeId } },
      parentContext(traceparent),
    );
    const engine = this.tracer.startSpan(
      'bayou.engine',
      { kind: SpanKind.CLIENT, attributes: { ...attributes, 'bayou.engine': this.engineKind } },
      trace.setSpan(context.active(), publish),
    );
    const end = (error?: unknown): void => {
      for (const span of [engine, publish]) {
        if (error !== undefined)
          span.setStatus({ code: SpanStatusCode.ERROR, message: String((error as Error)?.message ?? error) });
        span.end();
      }
    };
    let sent: T | Promise<T>;
    try {
      sent = send(traceparentOf(engine));
    } catch (err) {
      end(err);
      throw err;
    }
    if (!(sent instanceof Promise)) {
      end();
      return sent;
    }
    return sent.then(
      (v) => {
        end();
        return v;
      },
      (err: unknown) => {
        end(err);
        throw err;
      },
    );
  }

  /**
   * A traced publication about to reach this node's sessions: a delivery span under the
   * engine span it carries, ended after this turn's flush (scheduled after it, so it runs
   * later); returns the publication as the sessions get it, its message ending with
   * `ext.traceparent` naming this delivery span (for the client, and its acknowledgement).
   */
  delivering(publication: Publication, deliver: (p: Publication) => number): void {
    const carried = publication.trace as string;
    const channel = publication.channel;
    const span = this.tracer.startSpan(
      'bayou.deliver',
      {
        kind: otel().SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'bayou',
          'messaging.destination.name': channel,
          'bayou.node': this.nodeId,
        },
      },
      parentContext(carried),
    );
    const ext = `"ext":{"${EXT_TRACEPARENT}":"${traceparentOf(span)}"}`;
    const payload = `${publication.payload.slice(0, -1)},${ext}}`;
    span.setAttribute('bayou.sessions', deliver({ ...publication, payload }));
    if (this.delivered.length === 0) setImmediate(this.endDelivered);
    this.delivered.push(span);
  }

  /**
   * A session acknowledged (CometD's ack extension) batches holding `messages`: an instant
   * `bayou.ack` span under the delivery span of each traced one (its `ext.traceparent`).
   */
  readonly acked = (clientId: string, batch: number, messages: readonly (readonly string[])[]): void => {
    for (const frame of messages)
      for (const m of frame) {
        const at = m.lastIndexOf(TRACE_KEY);
        if (at < 0) continue;
        const traceparent = m.slice(at + TRACE_KEY.length, at + TRACE_KEY.length + 55);
        if (!isTraceparent(traceparent)) continue;
        this.tracer
          .startSpan(
            'bayou.ack',
            {
              kind: otel().SpanKind.SERVER,
              attributes: { 'bayou.node': this.nodeId, 'bayou.client': clientId, 'bayou.batch': batch },
            },
            parentContext(traceparent),
          )
          .end();
      }
  };
}
