/** Hooks over the client's connection: its state and transport, and channel messages. */
import type { ConnectionState, Message } from '@bayou/client';
import { useCallback, useEffect, useRef, useSyncExternalStore } from 'react';
import { useBayouClient } from './provider.js';

const serverState = (): ConnectionState => 'disconnected';
const serverTransport = (): string | null => null;

/** `'disconnected' | 'connecting' | 'connected' | 'reconnecting'`, re-rendering on change. */
export function useConnectionState(): ConnectionState {
  const client = useBayouClient();
  const subscribe = useCallback((onChange: () => void) => client.on('state', () => onChange()), [client]);
  return useSyncExternalStore(subscribe, () => client.state, serverState);
}

/** The transport in use (`'websocket'`, `'long-polling'`) or `null`, re-rendering on change. */
export function useTransport(): string | null {
  const client = useBayouClient();
  const subscribe = useCallback((onChange: () => void) => client.on('transport', () => onChange()), [client]);
  return useSyncExternalStore(subscribe, () => client.transport, serverTransport);
}

export interface UseChannelOptions {
  /** Subscribe only while true. Default `true`. */
  enabled?: boolean;
}

/**
 * Calls `handler` with every message on `channel` while the component is mounted. The
 * latest `handler` is used without resubscribing; the client shares one server
 * subscription among all handlers on a channel.
 */
export function useChannel(
  channel: string,
  handler: (message: Message) => void,
  options: UseChannelOptions = {},
): void {
  const client = useBayouClient();
  const latest = useRef(handler);
  useEffect(() => {
    latest.current = handler;
  });
  const enabled = options.enabled ?? true;
  useEffect(() => {
    if (!enabled) return;
    const subscription = client.subscribe(channel, (message) => latest.current(message));
    return () => subscription.unsubscribe();
  }, [client, channel, enabled]);
}
