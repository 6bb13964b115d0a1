export {
  defaultLimits,
  Limiter,
  type LimiterStats,
  type LimitKind,
  type LimitOptions,
  type LimitReply,
  resolveLimits,
} from './limiter.js';
export { type BucketSpec, type BucketState, fullBucket, isFull, take } from './token-bucket.js';
