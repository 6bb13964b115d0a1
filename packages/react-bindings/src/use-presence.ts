/** `usePresence(channel)`: who is in a channel, re-rendering on every join and leave. */
import type { PresenceSnapshot } from '@bayou/client';
import { useCallback, useMemo, useSyncExternalStore } from 'react';
import { useBayouClient } from './provider.js';

const NOBODY: PresenceSnapshot = Object.freeze({ members: Object.freeze([]), ready: false, error: null });
const serverSnapshot = (): PresenceSnapshot => NOBODY;

/**
 * The members of `channel` (a channel the server keeps presence for) while the component
 * is mounted: `{ members, ready, error }`. `ready` once the server's list came, `error` when
 * the server refused (`403` where the user may not read the channel). Components showing
 * one channel share its server subscription; the last to unmount releases it. Being shown
 * the list does not make this client a member: subscribing to the channel does.
 */
export function usePresence(channel: string): PresenceSnapshot {
  const client = useBayouClient();
  const store = useMemo(() => {
    if (client.presence === undefined) throw new TypeError('usePresence needs a client with presence()');
    return client.presence(channel);
  }, [client, channel]);
  const subscribe = useCallback((onChange: () => void) => store.subscribe(onChange), [store]);
  return useSyncExternalStore(subscribe, () => store.getSnapshot(), serverSnapshot);
}
