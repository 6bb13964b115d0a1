/**
 * `useField` and `useRecord`: `useSyncExternalStore` over the client's record store,
 * through the hub, so a component re-renders only when what it reads, or the status of
 * its subscription, changed.
 */
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import type { RecordOptions, RecordStore } from './client-contract.js';
import { useRecordHub } from './provider.js';
import { ALL_FIELDS, type RecordHub, type SubscriptionStatus } from './record-hub.js';

export interface LiveOptions extends RecordOptions {
  /** Hold the subscription only while true (e.g. the row is in view). Default `true`. */
  enabled?: boolean;
}

/** What the live hooks return. */
export interface LiveResult<T> {
  /** The value; `initialData` (or `undefined` / `null`) until the first image arrives. */
  data: T;
  /** Where the subscription stands (see `SubscriptionStatus`). */
  status: SubscriptionStatus;
  /** Why the subscription failed when `status` is `'error'` (a `BayouError` from the client), else `null`. */
  error: Error | null;
}

export interface UseFieldOptions<T> extends LiveOptions {
  /** The value to show before the first image: during server rendering, hydration and until the snapshot arrives. */
  initialData?: T;
}

export interface UseRecordOptions<T> extends LiveOptions {
  /** The image to show before the first one arrives: during server rendering, hydration and until the snapshot. */
  initialData?: T;
}

const unwatched = (): (() => void) => () => {};

function useStore(hub: RecordHub, subject: string, options: RecordOptions): RecordStore {
  const { fields, maxFrequency } = options;
  const fieldsKey = fields?.join('\u0000');
  // biome-ignore lint/correctness/useExhaustiveDependencies: `fieldsKey` stands for `fields`, whose array identity may change every render.
  return useMemo(() => {
    const wanted: RecordOptions = {};
    if (fields !== undefined) wanted.fields = fields;
    if (maxFrequency !== undefined) wanted.maxFrequency = maxFrequency;
    return hub.store(subject, fields === undefined && maxFrequency === undefined ? undefined : wanted);
  }, [hub, subject, fieldsKey, maxFrequency]);
}

/** One `useSyncExternalStore` over a store's value and its subscription's status, cached by parts. */
function useLive<T>(
  hub: RecordHub,
  store: RecordStore,
  watched: string,
  read: () => T,
  enabled: boolean,
  initial: T,
) {
  const cache = useRef<LiveResult<T> | null>(null);
  const subscribe = useCallback(
    (onChange: () => void) => (enabled ? hub.watch(store, watched, onChange) : unwatched()),
    [hub, store, watched, enabled],
  );
  const getSnapshot = useCallback((): LiveResult<T> => {
    const data = read();
    const status: SubscriptionStatus = enabled ? hub.status(store) : 'idle';
    const error = enabled ? hub.error(store) : null;
    const last = cache.current;
    if (last !== null && Object.is(last.data, data) && last.status === status && last.error === error)
      return last;
    cache.current = { data, status, error };
    return cache.current;
  }, [hub, store, read, enabled]);
  // On the server nothing subscribes: the initial data, and 'connecting' for what will subscribe in the browser.
  const [server] = useState<LiveResult<T>>(() => ({
    data: initial,
    status: enabled ? 'connecting' : 'idle',
    error: null,
  }));
  return useSyncExternalStore(subscribe, getSnapshot, () => server);
}

/**
 * One field of the record `subject`: `{ data, status, error }`. `data` is the field's
 * value, `initialData` (default `undefined`) before the first image and during server
 * rendering. Re-renders only when that field's value or the subscription's status
 * changes, at most once per animation frame for values. Every `useField` and `useRecord`
 * on a subject with the same options shares one subscription.
 */
export function useField<T = unknown>(
  subject: string,
  field: string,
  options: UseFieldOptions<T> = {},
): LiveResult<T | undefined> {
  const hub = useRecordHub();
  const store = useStore(hub, subject, options);
  const initial = useRef(options.initialData).current;
  const read = useCallback(() => {
    const value = store.getField(field) as T | undefined;
    return value === undefined ? initial : value;
  }, [store, field, initial]);
  return useLive(hub, store, field, read, options.enabled ?? true, initial);
}

/**
 * The value alone of one field, for `LiveCell`: no re-render when only the subscription's
 * status changes (a grid of thousands of cells would otherwise render each cell once more
 * when its row's subscription is confirmed).
 */
export function useFieldValue(subject: string, field: string, options: LiveOptions = {}): unknown {
  const hub = useRecordHub();
  const store = useStore(hub, subject, options);
  const enabled = options.enabled ?? true;
  const subscribe = useCallback(
    (onChange: () => void) => (enabled ? hub.watch(store, field, onChange) : unwatched()),
    [hub, store, field, enabled],
  );
  const getSnapshot = useCallback(() => store.getField(field), [store, field]);
  return useSyncExternalStore(subscribe, getSnapshot, serverValue);
}

const serverValue = (): unknown => undefined;

/**
 * The whole image of the record `subject` (or of `fields` only, which the server then
 * sends alone): `{ data, status, error }`, `data` being `initialData` (default `null`)
 * before the first image and during server rendering. Re-renders when any of its fields
 * changes (at most once per animation frame) or the subscription's status changes.
 */
export function useRecord<T extends object = Record<string, unknown>>(
  subject: string,
  options: UseRecordOptions<T> = {},
): LiveResult<Readonly<T> | null> {
  const hub = useRecordHub();
  const store = useStore(hub, subject, options);
  const initial = useRef<Readonly<T> | null>(options.initialData ?? null).current;
  const read = useCallback(() => (store.getSnapshot() as Readonly<T> | null) ?? initial, [store, initial]);
  return useLive(hub, store, ALL_FIELDS, read, options.enabled ?? true, initial);
}

export interface LiveStats {
  /** Records the components under the provider hold a subscription on now. */
  liveRecords: number;
  /** Record updates received per second over the last interval. */
  updatesPerSecond: number;
}

/** Live subscriptions and updates per second of the provider's components, sampled every `intervalMs` (default 1000). */
export function useLiveStats(intervalMs = 1000): LiveStats {
  const hub = useRecordHub();
  const [stats, setStats] = useState<LiveStats>({ liveRecords: 0, updatesPerSecond: 0 });
  useEffect(() => {
    let last = hub.stats.updates;
    let at = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      const { liveRecords, updates } = hub.stats;
      const updatesPerSecond = Math.round(((updates - last) * 1000) / Math.max(1, now - at));
      last = updates;
      at = now;
      setStats((s) =>
        s.liveRecords === liveRecords && s.updatesPerSecond === updatesPerSecond
          ? s
          : { liveRecords, updatesPerSecond },
      );
    }, intervalMs);
    return () => clearInterval(timer);
  }, [hub, intervalMs]);
  return stats;
}
