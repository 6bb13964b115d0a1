/**
 * Record subjects: the latest image of each, its subscribers, conflation and providers.
 * An update merges into the image and reaches subscribers as a delta of the changed
 * fields: serialized once per encoding for everyone who takes every field at full rate,
 * merged per subscriber (latest value wins) for those with a field subset or a throttle,
 * who get one message per window from the shared `ThrottleWheel`.
 */
import { expandChannel } from '@bayou/protocol';
import type { Session } from '../session/session.js';
import {
  CompactDictionary,
  DEFINE_ALL,
  encodeRecord,
  type NeedsDefinition,
  type RecordEncoding,
} from './record-codec.js';
import { effectiveThrottle, type RecordRequest, type ResolvedRecordPattern } from './record-options.js';
import { ThrottleWheel } from './throttle-wheel.js';

interface RecordSubscriber {
  readonly session: Session;
  readonly state: RecordState;
  readonly fields: ReadonlySet<string> | null;
  readonly throttleMs: number;
  readonly encoding: RecordEncoding;
  pending: Record<string, unknown> | null;
  scheduled: boolean;
  active: boolean;
  /** How many of the subject's fields (in `fieldOrder`) this subscriber has had named. */
  defined: number;
  /** Set once its subscribe reply went out: snapshots wait for it. */
  ready: boolean;
}

interface RecordState {
  readonly subject: string;
  image: Record<string, unknown> | null;
  readonly subscribers: Map<Session, RecordSubscriber>;
  /** Subscribers that take every field at full rate: they share one message per update. */
  shared: number;
  /** Field names already defined to the shared compact subscribers of this subject. */
  readonly announced: Set<string>;
  /** Every field the image ever had, in order of appearance, and each one's position. */
  readonly fieldOrder: string[];
  readonly fieldIndex: Map<string, number>;
}

export class RecordStore {
  private readonly states = new Map<string, RecordState>();
  private readonly dict = new CompactDictionary();
  private readonly wheel = new ThrottleWheel<RecordSubscriber>(10, (s) => this.flushPending(s));

  constructor(private readonly patterns: ReadonlyMap<string, ResolvedRecordPattern>) {}

  /** The fields of `fields` that differ from the image this node holds (all of them without one). */
  diff(subject: string, fields: Record<string, unknown>): Record<string, unknown> | null {
    const image = this.states.get(subject)?.image;
    if (image === null || image === undefined) return Object.keys(fields).length > 0 ? fields : null;
    let changed: Record<string, unknown> | null = null;
    for (const name of Object.keys(fields)) {
      if (image[name] === fields[name]) continue;
      changed ??= {};
      changed[name] = fields[name];
    }
    return changed;
  }

  /** Whether this node holds an image of `subject`. */
  hasImage(subject: string): boolean {
    return (this.states.get(subject)?.image ?? null) !== null;
  }

  /** Merges `fields` into the image of `subject` and sends the changes to local subscribers. */
  apply(subject: string, fields: Record<string, unknown>): void {
    const state = this.stateOf(subject);
    for (const name of Object.keys(fields)) {
      if (!state.fieldIndex.has(name)) {
        state.fieldIndex.set(name, state.fieldOrder.length);
        state.fieldOrder.push(name);
      }
    }
    if (state.image === null) {
      state.image = { ...fields };
      for (const sub of state.subscribers.values()) if (sub.ready) this.sendSnapshot(sub);
      return;
    }
    let changed: Record<string, unknown> | null = null;
    for (const name of Object.keys(fields)) {
      const value = fields[name];
      if (state.image[name] === value) continue;
      state.image[name] = value;
      changed ??= {};
      changed[name] = value;
    }
    if (changed !== null) this.fanOut(state, changed);
  }

  /** The pattern that makes `subject` a record, or `undefined` for a plain channel. */
  patternFor(subject: string): ResolvedRecordPattern | undefined {
    if (this.patterns.size === 0) return undefined;
    for (const name of expandChannel(subject)) {
      const p = this.patterns.get(name);
      if (p !== undefined) return p;
    }
    return undefined;
  }

  image(subject: string): Readonly<Record<string, unknown>> | null {
    return this.states.get(subject)?.image ?? null;
  }

  subscriberCount(subject: string): number {
    return this.states.get(subject)?.subscribers.size ?? 0;
  }

  /** Adds a subscriber; returns `true` when it is the subject's first on this node. */
  subscribe(
    session: Session,
    subject: string,
    pattern: ResolvedRecordPattern,
    request: RecordRequest,
    encoding: RecordEncoding,
  ): boolean {
    const state = this.stateOf(subject);
    if (state.subscribers.has(session)) return false;
    const fields = request.fields !== undefined ? new Set(request.fields) : null;
    const throttleMs = effectiveThrottle(pattern, request);
    const sub: RecordSubscriber = {
      session,
      state,
      fields,
      throttleMs,
      encoding,
      pending: null,
      scheduled: false,
      active: true,
      defined: 0,
      ready: false,
    };
    state.subscribers.set(session, sub);
    if (isShared(sub)) state.shared++;
    return state.subscribers.size === 1;
  }

  /**
   * Sends the image to a subscriber of `subject` (after its subscribe reply, and again for
   * each repeated subscribe). One arriving before the first image waits for it: no empty
   * snapshot.
   */
  sendSnapshotTo(session: Session, subject: string): void {
    const sub = this.states.get(subject)?.subscribers.get(session);
    if (sub === undefined) return;
    sub.ready = true;
    if (sub.state.image !== null) this.sendSnapshot(sub);
  }

  /** Removes a subscriber; returns `true` when it was the subject's last on this node. */
  unsubscribe(session: Session, subject: string): boolean {
    const state = this.states.get(subject);
    const sub = state?.subscribers.get(session);
    if (state === undefined || sub === undefined) return false;
    sub.active = false;
    state.subscribers.delete(session);
    if (isShared(sub)) state.shared--;
    return state.subscribers.size === 0;
  }

  close(): void {
    this.wheel.stop();
  }

  private stateOf(subject: string): RecordState {
    let state = this.states.get(subject);
    if (state === undefined) {
      state = {
        subject,
        image: null,
        subscribers: new Map(),
        shared: 0,
        announced: new Set(),
        fieldOrder: [],
        fieldIndex: new Map(),
      };
      this.states.set(subject, state);
    }
    return state;
  }

  /** A provider let go of `subject`: its image is stale, the next subscriber waits for a new one. */
  discarded(subject: string): void {
    const state = this.states.get(subject);
    if (state !== undefined && state.subscribers.size === 0) this.states.delete(subject);
  }

  private sendSnapshot(sub: RecordSubscriber): void {
    const image = sub.state.image as Record<string, unknown>;
    const fields = sub.fields === null ? image : pick(image, sub.fields);
    sub.defined = sub.state.fieldOrder.length;
    sub.session.enqueue(encodeRecord(sub.encoding, sub.state.subject, fields, 's', this.dict, DEFINE_ALL));
  }

  private fanOut(state: RecordState, changed: Record<string, unknown>): void {
    // One serialization per encoding in use among the shared subscribers.
    const encoded: Partial<Record<RecordEncoding, string>> = {};
    for (const sub of state.subscribers.values()) {
      // Not snapshotted yet: its snapshot will hold this change.
      if (!sub.ready) continue;
      if (!isShared(sub)) {
        this.addPending(sub, changed);
        continue;
      }
      let json = encoded[sub.encoding];
      if (json === undefined) {
        const defs = sub.encoding === 'compact' ? announceOnce(state.announced) : DEFINE_ALL;
        json = encodeRecord(sub.encoding, state.subject, changed, 'd', this.dict, defs);
        encoded[sub.encoding] = json;
      }
      sub.session.enqueue(json);
    }
  }

  private addPending(sub: RecordSubscriber, changed: Record<string, unknown>): void {
    const part = sub.fields === null ? changed : pick(changed, sub.fields);
    if (part === changed)
      sub.pending = sub.pending === null ? { ...changed } : Object.assign(sub.pending, changed);
    else if (Object.keys(part).length > 0) sub.pending = Object.assign(sub.pending ?? {}, part);
    if (sub.pending === null) return;
    if (sub.throttleMs === 0) this.flushPending(sub);
    else if (!sub.scheduled) {
      sub.scheduled = true;
      this.wheel.schedule(sub, sub.throttleMs);
    }
  }

  private flushPending(sub: RecordSubscriber): void {
    sub.scheduled = false;
    const pending = sub.pending;
    sub.pending = null;
    if (pending === null || !sub.active) return;
    const { fieldIndex, fieldOrder } = sub.state;
    const known = sub.defined;
    const needs: NeedsDefinition = (name) => (fieldIndex.get(name) ?? 0) >= known;
    sub.defined = fieldOrder.length;
    sub.session.enqueue(encodeRecord(sub.encoding, sub.state.subject, pending, 'd', this.dict, needs));
  }
}

/** Shared deltas name a field the first time the subject sends it (every receiver saw all earlier ones). */
function announceOnce(announced: Set<string>): NeedsDefinition {
  return (name) => {
    if (announced.has(name)) return false;
    announced.add(name);
    return true;
  };
}

function isShared(sub: RecordSubscriber): boolean {
  return sub.fields === null && sub.throttleMs === 0;
}

function pick(source: Record<string, unknown>, fields: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of fields) if (name in source) out[name] = source[name];
  return out;
}
