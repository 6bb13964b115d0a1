/** Hooks over the client's connection: its state and transport, and channel messages. */
import type { ConnectionState, Message } from '@bayou/client';
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { useBayouClient } from './provider.js';
import type { LiveResult } from './use-record.js';

const serverState = (): ConnectionState => 'disconnected';
const serverTransport = (): string | null => null;

/** `'disconnected' | 'connecting' | 'connected' | 'reconnecting'`, re-rendering on change. */
export function useConnectionState(): ConnectionState {
  const client = useBayouClient();
  const subscribe = useCallback((onChange: () => void) => client.on('state', () => onChange()), [client]);
  return useSyncExternalStore(subscribe, () => client.state, serverState);
}

/**
 * The transport in use — `'websocket'`, `'streaming'` or `'long-polling'` (the client's
 * transports) — or `null` while not connected, re-rendering on change. The client emits no
 * `transport` event when a connection is lost (the transport becomes `null`), so state
 * changes are followed too.
 */
export function useTransport(): string | null {
  const client = useBayouClient();
  const subscribe = useCallback(
    (onChange: () => void) => {
      const offTransport = client.on('transport', () => onChange());
      const offState = client.on('state', () => onChange());
      return () => {
        offTransport();
        offState();
      };
    },
    [client],
  );
  return useSyncExternalStore(subscribe, () => client.transport, serverTransport);
}

export interface UseChannelOptions<T> {
  /** Subscribe only while true. Default `true`. */
  enabled?: boolean;
  /** `data` until the first message arrives (and during server rendering). */
  initialData?: T;
}

/**
 * Subscribes to `channel` while the component is mounted: `{ data, status, error }`, where
 * `data` is the `data` of the latest message (`initialData` before the first), `status`
 * says whether the server accepted the subscription, and `error` why it did not. Re-renders
 * on every message and status change. `handler`, when given, is called with every message
 * (the latest `handler`, without resubscribing). The client shares one server subscription
 * among all handlers on a channel.
 */
export function useChannel<T = unknown>(
  channel: string,
  handler?: ((message: Message) => void) | null,
  options: UseChannelOptions<T> = {},
): LiveResult<T | undefined> {
  const client = useBayouClient();
  const latest = useRef(handler);
  useEffect(() => {
    latest.current = handler;
  });
  const enabled = options.enabled ?? true;
  const [result, setResult] = useState<LiveResult<T | undefined>>(() => ({
    data: options.initialData,
    status: enabled ? 'connecting' : 'idle',
    error: null,
  }));
  useEffect(() => {
    if (!enabled) {
      setResult((r) => (r.status === 'idle' ? r : { ...r, status: 'idle', error: null }));
      return;
    }
    let live = true;
    setResult((r) => (r.status === 'connecting' ? r : { ...r, status: 'connecting', error: null }));
    let gap = false;
    const subscription = client.subscribe(channel, (message) => {
      latest.current?.(message);
      // The first message after a gap is live data, but the gap stays visible for it.
      if (live) setResult({ data: message.data as T, status: gap ? 'gap' : 'subscribed', error: null });
      gap = false;
    });
    // A reconnect the server could not recover (the client's `gap` event): say so.
    const offGap = client.on('gap', (info: { channel: string }) => {
      if (!live || info.channel !== channel) return;
      gap = true;
      setResult((r) => ({ ...r, status: 'gap', error: null }));
    });
    subscription.ready?.then(
      () => {
        if (live)
          setResult((r) => (r.status === 'subscribed' ? r : { ...r, status: 'subscribed', error: null }));
      },
      (error: unknown) => {
        if (live)
          setResult((r) => ({
            ...r,
            status: 'error',
            error: error instanceof Error ? error : new Error(String(error)),
          }));
      },
    );
    return () => {
      live = false;
      offGap();
      subscription.unsubscribe();
    };
  }, [client, channel, enabled]);
  return result;
}
