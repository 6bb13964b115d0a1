/**
 * The flags of `bayou start` for compression on the wire (`transports/compression.ts`).
 * Part of the one flag table (`FLAGS` in `flags.ts`).
 */
import { defaultOptions } from '../options.js';
import { type FlagSpec, shown } from './flag-spec.js';

export const COMPRESSION_FLAGS: readonly FlagSpec[] = [
  {
    flag: 'compression',
    env: ['BAYOU_COMPRESSION'],
    key: 'compression',
    kind: 'bool',
    help: 'compress what goes out: permessage-deflate on WebSockets (window 2^11, no context takeover), gzip on long-polling replies and streams',
    default: shown(defaultOptions.compression),
  },
  {
    flag: 'compression-threshold',
    env: ['BAYOU_COMPRESSION_THRESHOLD'],
    key: 'compressionThreshold',
    kind: 'int',
    value: '<n>',
    help: 'with --compression, payloads under this many bytes go uncompressed',
    default: shown(defaultOptions.compressionThreshold),
  },
];
