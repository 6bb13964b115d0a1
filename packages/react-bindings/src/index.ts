'use client';

export type { BayouReactClient, PresenceStore, RecordOptions, RecordStore } from './client-contract.js';
export { FLASH_DOWN, FLASH_UP } from './flash.js';
export { animationFrame, FrameBatcher, type Schedule, synchronous } from './frame-batcher.js';
export { LiveCell, type LiveCellProps } from './live-cell.js';
export { BayouProvider, type BayouProviderProps, useBayouClient, useRecordHub } from './provider.js';
export { ALL_FIELDS, RecordHub, type RecordHubStats, type SubscriptionStatus } from './record-hub.js';
export { type UseChannelOptions, useChannel, useConnectionState, useTransport } from './use-connection.js';
export { type InViewOptions, observeInView, useInView } from './use-in-view.js';
export { usePresence } from './use-presence.js';
export {
  type LiveOptions,
  type LiveResult,
  type LiveStats,
  type UseFieldOptions,
  type UseRecordOptions,
  useField,
  useLiveStats,
  useRecord,
} from './use-record.js';
