/** `<BayouProvider client>`: makes a client (and the record hub over it) available to the hooks below it. */
import { createContext, type ReactNode, useContext, useMemo } from 'react';
import type { BayouReactClient } from './client-contract.js';
import { animationFrame, synchronous } from './frame-batcher.js';
import { RecordHub } from './record-hub.js';

const BayouContext = createContext<RecordHub | null>(null);

export interface BayouProviderProps {
  /** A `BayouClient` (connected by the app; the provider neither connects nor disconnects it). */
  client: BayouReactClient;
  /**
   * When record changes reach components: `'frame'` coalesces them to the next animation
   * frame (one render per frame however many updates arrive), `'none'` delivers each at
   * once. Default `'frame'`.
   */
  coalesce?: 'frame' | 'none';
  children?: ReactNode;
}

export function BayouProvider({ client, coalesce = 'frame', children }: BayouProviderProps): ReactNode {
  const hub = useMemo(
    () => new RecordHub(client, coalesce === 'none' ? synchronous : animationFrame),
    [client, coalesce],
  );
  return <BayouContext.Provider value={hub}>{children}</BayouContext.Provider>;
}

/** The record hub of the nearest `<BayouProvider>`; throws outside one. */
export function useRecordHub(): RecordHub {
  const hub = useContext(BayouContext);
  if (hub === null) throw new Error('@bayou/react: wrap your components in <BayouProvider client={client}>');
  return hub;
}

/** The client of the nearest `<BayouProvider>`. */
export function useBayouClient(): BayouReactClient {
  return useRecordHub().client;
}
