/** The `@bayou/client` transports a chaos client is limited to, by `--transport` name. */
import { type BayouClientOptions, longPolling, streaming, websocket } from '@bayou/client';

export type ChaosTransport = 'websocket' | 'long-polling' | 'streaming';
export const CHAOS_TRANSPORTS: readonly ChaosTransport[] = ['websocket', 'long-polling', 'streaming'];

/** One transport alone, so a run over `streaming` cannot quietly fall back to another. */
export function clientTransports(transport: ChaosTransport): NonNullable<BayouClientOptions['transports']> {
  if (transport === 'long-polling') return [longPolling];
  if (transport === 'streaming') return [streaming];
  return [websocket];
}
