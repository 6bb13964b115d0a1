/**
 * The flags of `bayou start` for backend hooks over HTTP: webhooks (events POSTed to a
 * receiver) and proxy hooks (connect, subscribe, publish and rpc decided by a backend).
 * Part of the one flag table (`FLAGS` in `flags.ts`); the rest of each (batching,
 * retries, per-hook timeouts and headers) lives in the config file.
 */
import type { FlagSpec } from './flag-spec.js';

const httpUrl = (v: unknown) =>
  /^https?:\/\/./.test(v as string) ? null : 'must be an http:// or https:// URL';

export const HOOK_FLAGS: readonly FlagSpec[] = [
  {
    flag: 'webhook-url',
    env: ['BAYOU_WEBHOOK_URL'],
    key: 'webhooks.url',
    kind: 'string',
    value: '<url>',
    help: 'POST session, channel and presence events to this URL, batched and retried (webhooks.* in the config file for the rest)',
    default: 'none (no webhooks)',
    check: httpUrl,
  },
  {
    flag: 'webhook-secret',
    env: ['BAYOU_WEBHOOK_SECRET'],
    key: 'webhooks.secret',
    kind: 'string',
    value: '<secret>',
    help: 'sign each webhook body: X-Bayou-Signature: sha256=<hex HMAC-SHA256 of the body> (prefer the env variable)',
    default: 'none (unsigned)',
    secret: true,
  },
];
