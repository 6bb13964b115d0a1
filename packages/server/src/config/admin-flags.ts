/**
 * The flags of `bayou start` for the operator's console at `/admin` (`admin/`). Part of
 * the one flag table (`FLAGS` in `flags.ts`).
 */
import type { FlagSpec } from './flag-spec.js';

export const ADMIN_FLAGS: readonly FlagSpec[] = [
  {
    flag: 'admin',
    env: ['BAYOU_ADMIN'],
    key: 'admin.enabled',
    kind: 'bool',
    help: 'serve the operator console at /admin (needs --admin-password unless the host is loopback)',
    default: 'false',
  },
  {
    flag: 'admin-password',
    env: ['BAYOU_ADMIN_PASSWORD'],
    key: 'admin.password',
    kind: 'string',
    value: '<password>',
    help: 'the console password (≥ 12 characters; prefer the env variable)',
    default: 'none (console on loopback only)',
    secret: true,
    check: (v) => (typeof v === 'string' && v.length >= 12 ? null : 'must be at least 12 characters'),
  },
];
