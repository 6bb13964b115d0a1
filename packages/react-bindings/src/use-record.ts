/**
 * `useField` and `useRecord`: `useSyncExternalStore` over the client's record store,
 * through the hub, so a component re-renders only when what it reads changed.
 */
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import type { RecordOptions, RecordStore } from './client-contract.js';
import { useRecordHub } from './provider.js';
import { ALL_FIELDS, type RecordHub } from './record-hub.js';

export interface LiveOptions extends RecordOptions {
  /** Hold the subscription only while true (e.g. the row is in view). Default `true`. */
  enabled?: boolean;
}

const serverField = (): unknown => undefined;
const serverRecord = (): null => null;
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

/**
 * The current value of one field of the record `subject` (`undefined` before the first
 * image, and during server rendering). Re-renders only when that field's value changes,
 * at most once per animation frame. Every `useField` and `useRecord` on a subject with
 * the same options shares one subscription.
 */
export function useField(subject: string, field: string, options: LiveOptions = {}): unknown {
  const hub = useRecordHub();
  const store = useStore(hub, subject, options);
  const enabled = options.enabled ?? true;
  const subscribe = useCallback(
    (onChange: () => void) => (enabled ? hub.watch(store, field, onChange) : unwatched()),
    [hub, store, field, enabled],
  );
  const getSnapshot = useCallback(() => store.getField(field), [store, field]);
  return useSyncExternalStore(subscribe, getSnapshot, serverField);
}

/**
 * The whole image of the record `subject` (or of `fields` only, which the server then
 * sends alone), `null` before the first image and during server rendering. Re-renders
 * when any of its fields changes, at most once per animation frame.
 */
export function useRecord(
  subject: string,
  fields?: string[],
  options: Omit<LiveOptions, 'fields'> = {},
): Readonly<Record<string, unknown>> | null {
  const hub = useRecordHub();
  const store = useStore(hub, subject, { ...options, fields });
  const enabled = options.enabled ?? true;
  const subscribe = useCallback(
    (onChange: () => void) => (enabled ? hub.watch(store, ALL_FIELDS, onChange) : unwatched()),
    [hub, store, enabled],
  );
  const getSnapshot = useCallback(() => store.getSnapshot(), [store]);
  return useSyncExternalStore(subscribe, getSnapshot, serverRecord);
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
