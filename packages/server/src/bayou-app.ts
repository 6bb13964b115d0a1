/**
 * The application facade, `app.bayou`: what an application does with a Bayou node —
 * publish, serve `/service` channels, feed and update records, add extensions, count
 * subscribers, read presence, and listen to session events. Everything else (sessions,
 * queues, the index) belongs to the kernel and stays out of reach.
 */
import { EventEmitter } from 'node:events';
import { isTraceparent, parseChannel, type StreamPosition } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { Extension } from './bayeux/extensions.js';
import type { Engine, MaybePromise, PresenceMember } from './engine/engine.js';
import { BayouConfigError } from './errors.js';
import type { BayouEvents, ServiceHandler } from './kernel/events.js';
import { OutageLog } from './kernel/outage-log.js';
import type { Provider } from './records/provider-registry.js';
import type { ServerSession } from './session/session.js';
import type { RemovalReason } from './types.js';

/** Counters for health checks and metrics. */
/** Options of one `publish`. */
export interface PublishOptions {
  /** A W3C `traceparent` to continue (`00-<trace id>-<parent id>-<flags>`). */
  readonly traceparent?: string;
}

export interface BayouStats {
  readonly sessions: number;
  readonly messagesIn: number;
  readonly publishes: number;
  readonly slowConsumers: number;
  readonly engineErrors: number;
  readonly messagesOut: number;
  readonly bytesOut: number;
  readonly frames: number;
  readonly heldLongPolls: number;
  /** Subscriptions held by this node's sessions (plain and record). */
  readonly subscriptions: number;
  /** Sessions ended, by reason. */
  readonly removed: Readonly<Record<RemovalReason, number>>;
  /** Handshakes by outcome. */
  readonly handshakes: Readonly<{ accepted: number; denied: number; failed: number }>;
}

/**
 * What the facade may ask of its node: a narrow port the composition root
 * (`kernel/create-node.ts`) builds from the node's collaborators. The facade never sees
 * the kernel, its sessions' internals or its queues.
 */
export interface AppPort {
  readonly nodeId: string;
  readonly log: FastifyBaseLogger;
  publish(channel: string, data: unknown, traceparent?: string): MaybePromise<StreamPosition | null>;
  updateRecord(subject: string, fields: Record<string, unknown>): MaybePromise<void>;
  deliverTo(clientId: string, channel: string, data: unknown): MaybePromise<boolean>;
  isRecordSubject(channel: string): boolean;
  recordImage(subject: string): Readonly<Record<string, unknown>> | null;
  readonly services: { has(channel: string): boolean; set(channel: string, handler: ServiceHandler): void };
  readonly providers: { has(pattern: string): boolean; add(pattern: string, provider: Provider): void };
  addExtension(extension: Extension): void;
  readonly extensionOrder: readonly string[];
  /** Someone listens for `channel:occupied`/`channel:vacated`: track occupancy cluster-wide. */
  wantOccupancy(): void;
  subscriberCount(channel: string): number;
  /** The engine's cluster-wide member lists. */
  readonly presence: Engine['presence'];
  session(clientId: string): ServerSession | undefined;
  readonly sessionCount: number;
  stats(): BayouStats;
}

export class BayouApp extends EventEmitter<BayouEvents> {
  /** Given by the composition root that made this facade. */
  private readonly port: AppPort;
  /** The engine's refusals of this facade's calls, logged once per outage. */
  private readonly outage: OutageLog;

  constructor(port: AppPort) {
    super();
    this.port = port;
    this.outage = new OutageLog(port.log, 'bayou.publish/deliver/updateRecord');
    // Occupancy costs engine calls per channel: tracked from the first listener on.
    (this as unknown as EventEmitter).on('newListener', (event: string | symbol) => {
      if (event === 'channel:occupied' || event === 'channel:vacated') port.wantOccupancy();
    });
  }

  /** This node's id (the prefix of the clientIds it issues). */
  get nodeId(): string {
    return this.port.nodeId;
  }

  /**
   * Publishes `data` on a broadcast channel to every subscriber on every node; resolves
   * with the message's history position (or `null`) once the engine has it. A W3C
   * `traceparent` in `options` continues that trace through the engine to the deliveries
   * when an OpenTelemetry SDK is installed (an invalid one is ignored, as W3C asks).
   */
  publish(channel: string, data: unknown, options?: PublishOptions): Promise<StreamPosition | null> {
    const info = parseChannel(channel);
    if (info === null || info.kind !== 'broadcast' || info.wildcard !== null) {
      throw new BayouConfigError(
        'BAYOU_ERR_INVALID_CHANNEL',
        `cannot publish to "${channel}": not a broadcast channel`,
      );
    }
    if (this.port.isRecordSubject(channel)) {
      throw new BayouConfigError(
        'BAYOU_ERR_INVALID_CHANNEL',
        `"${channel}" is a record subject: use updateRecord()`,
      );
    }
    const trace = options?.traceparent;
    return this.settled(
      () => this.port.publish(channel, data, isTraceparent(trace) ? trace : undefined),
      'publish',
    );
  }

  /**
   * A promise of what the engine did. A failure is logged (once per outage) even when nobody awaits it, so a
   * fire-and-forget publish during an engine outage cannot crash the process; awaiting
   * callers still see the rejection.
   */
  private settled<T>(call: () => T | Promise<T>, what: string): Promise<T> {
    let p: Promise<T>;
    try {
      p = Promise.resolve(call());
    } catch (err) {
      // Thrown before reaching the engine (data JSON cannot hold): the caller's bug.
      p = Promise.reject(err);
      p.catch((e: unknown) => this.port.log.warn({ err: e }, `${what} failed`));
      return p;
    }
    // Rejected by the engine: logged once per outage, not once per call.
    p.then(
      () => this.outage.answered(),
      (err: unknown) => this.outage.failed(err),
    );
    return p;
  }

  /**
   * Sends `data` on `channel` to one session only (a private message), wherever in the
   * cluster it lives; resolves `false` when no such session is known.
   */
  deliver(session: ServerSession | string, channel: string, data: unknown): Promise<boolean> {
    const clientId = typeof session === 'string' ? session : session.id;
    return this.settled(() => this.port.deliverTo(clientId, channel, data), 'deliver');
  }

  /** Serves a `/service/...` channel (or pattern); the handler's result is the reply. */
  service(channel: string, handler: ServiceHandler<BayouApp>): this {
    const info = parseChannel(channel);
    if (info === null || info.kind !== 'service') {
      throw new BayouConfigError(
        'BAYOU_ERR_INVALID_CHANNEL',
        `service channel "${channel}" must start with /service/`,
      );
    }
    if (this.port.services.has(channel)) {
      throw new BayouConfigError(
        'BAYOU_ERR_DUPLICATE_SERVICE',
        `a handler for "${channel}" is already registered`,
      );
    }
    this.port.services.set(channel, handler as ServiceHandler);
    return this;
  }

  /**
   * Merges `fields` into the image of a record subject (a channel matching one of the
   * `records` patterns); subscribers on every node get the changed fields, conflated per
   * their throttle. Resolves once the engine has the update.
   */
  updateRecord(subject: string, fields: Record<string, unknown>): Promise<void> {
    if (!this.port.isRecordSubject(subject) || parseChannel(subject)?.wildcard !== null) {
      throw new BayouConfigError('BAYOU_ERR_INVALID_CHANNEL', `"${subject}" matches no records pattern`);
    }
    return this.settled(() => this.port.updateRecord(subject, fields), 'updateRecord');
  }

  /** The latest image of a record subject as this node holds it, or `null`. */
  recordImage(subject: string): Readonly<Record<string, unknown>> | null {
    return this.port.recordImage(subject);
  }

  /** Feeds record subjects matching `pattern` on demand (first subscriber → `onRequest`). */
  provide(pattern: string, provider: Provider): this {
    const info = parseChannel(pattern);
    if (info === null || info.kind !== 'broadcast') {
      throw new BayouConfigError(
        'BAYOU_ERR_INVALID_CHANNEL',
        `provider pattern "${pattern}" is not a broadcast channel`,
      );
    }
    if (this.port.providers.has(pattern)) {
      throw new BayouConfigError(
        'BAYOU_ERR_DUPLICATE_SERVICE',
        `a provider for "${pattern}" is already registered`,
      );
    }
    this.port.providers.add(pattern, provider);
    return this;
  }

  /**
   * Adds a server extension to the pipeline, in its `stage` (`'app'` by default: after the
   * guards and the protocol's extensions), after those already in that stage.
   */
  addExtension(extension: Extension): this {
    this.port.addExtension(extension);
    return this;
  }

  /** The pipeline as it runs, `stage:name` each (`guard:auth`, `protocol:ack`, `app:audit`). */
  get extensionOrder(): readonly string[] {
    return this.port.extensionOrder;
  }

  /** Subscribers of `channel` on this node, plain and record. */
  subscriberCount(channel: string): number {
    return this.port.subscriberCount(channel);
  }

  /** Subscribers of a record subject in the whole cluster (as reported by the engine's presence). */
  clusterSubscriberCount(channel: string): Promise<number> {
    return this.port.presence.count(channel);
  }

  /** Cluster-wide member lists of a channel: join on behalf of a session, leave, read. */
  get presence(): {
    join(channel: string, session: ServerSession, info?: Record<string, unknown>): Promise<void>;
    leave(channel: string, session: ServerSession): Promise<void>;
    members(channel: string): Promise<PresenceMember[]>;
  } {
    const presence = this.port.presence;
    return {
      join: (channel, session, info) =>
        presence.join(channel, { clientId: session.id, ...(info ? { info } : {}) }),
      leave: (channel, session) => presence.leave(channel, session.id),
      members: (channel) => presence.members(channel),
    };
  }

  /** A session of this node by clientId. */
  session(clientId: string): ServerSession | undefined {
    return this.port.session(clientId);
  }

  get sessionCount(): number {
    return this.port.sessionCount;
  }

  stats(): BayouStats {
    return this.port.stats();
  }
}
