/**
 * The Lua scripts that make each engine step one atomic round trip, and a runner that
 * calls them by SHA and loads them again after a Redis restart (`NOSCRIPT`).
 * Times come from Redis (`TIME`), so node clocks never need to agree.
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

export interface Script {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** A channel's meta: made with a fresh epoch when missing (its history was lost). */
const ENSURE_META = `local function ensure_meta(fresh, ttl)
  local epoch = redis.call('HGET', KEYS[1], 'epoch')
  if epoch then return epoch end
  redis.call('HSET', KEYS[1], 'epoch', fresh, 'top', 0)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('DEL', KEYS[2])
  return fresh
end
local function read_top()
  return tonumber(redis.call('HGET', KEYS[1], 'top') or '0')
end`;

/**
 * Publish. KEYS: meta, stream. ARGV: payload, history size (0: none), history ttlMs,
 * epochTtlMs, fresh epoch, header, PUBLISH|SPUBLISH, topics… Assigns the next offset,
 * appends to the stream (bounded, expiring), then publishes `header\noffset\nepoch\npayload`
 * on every topic. Returns { offset, epoch } ('' and '' without history).
 */
export const PUBLISH = script(`${ENSURE_META}
local size = tonumber(ARGV[2])
local offset, epoch = '', ''
if size > 0 then
  ${NOW}
  local ttl = tonumber(ARGV[3])
  epoch = ensure_meta(ARGV[5], ttl)
  offset = redis.call('HINCRBY', KEYS[1], 'top', 1)
  redis.call('XADD', KEYS[2], 'MAXLEN', size, offset .. '-1', 'p', ARGV[1], 'x', now + ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[1], math.max(ttl, tonumber(ARGV[4])))
end
local message = ARGV[6] .. '\\n' .. offset .. '\\n' .. epoch .. '\\n' .. ARGV[1]
for i = 8, #ARGV do redis.call(ARGV[7], ARGV[i], message) end
return {offset, epoch}`);

/**
 * Record update. KEYS: image. ARGV: header, fields payload, PUBLISH|SPUBLISH, topic count n,
 * n topics, then field/JSON-value pairs merged into the image.
 */
export const PUBLISH_RECORD = script(`local n = tonumber(ARGV[4])
if #ARGV > 4 + n then redis.call('HSET', KEYS[1], unpack(ARGV, 5 + n)) end
local message = ARGV[1] .. '\\n\\n\\n' .. ARGV[2]
for i = 5, 4 + n do redis.call(ARGV[3], ARGV[i], message) end
return 1`);

/**
 * History since a position. KEYS: meta, stream. ARGV: offset, epoch, fresh epoch, epochTtlMs,
 * '1' when the position is one a node delivered. Returns {found, top, epoch, payloads…}: found
 * 1 with what came after the position, 0 when history cannot tell (trimmed, expired, another
 * epoch for a client's position), 2 for a node's position in an epoch that is over (a Redis
 * restarted empty, a channel that expired) with the current epoch whole from its offset 1:
 * the node delivered none of it, so all of it comes back.
 * A delivered position past the top of its own epoch comes from writes this history lost
 * (a failover to a replica that had not received them yet): the channel takes the fresh
 * epoch, so those offsets are never given to other messages.
 */
export const SINCE = script(`${ENSURE_META}
local epoch = ensure_meta(ARGV[3], tonumber(ARGV[4]))
local top = read_top()
local from = tonumber(ARGV[1])
local found = 1
if ARGV[5] == '1' and ARGV[2] == epoch and from ~= nil and from > top then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[3], 'top', 0)
  redis.call('DEL', KEYS[2])
  return {0, 0, ARGV[3]}
end
if ARGV[5] == '1' and ARGV[2] ~= epoch then
  found, from = 2, 0
elseif ARGV[2] ~= epoch or from == nil or from > top or from < 0 then
  return {0, top, epoch}
end
if from == top then return {found, top, epoch} end
${NOW}
local entries = redis.call('XRANGE', KEYS[2], (from + 1) .. '-1', '+')
local first = entries[1]
if not first or first[1] ~= (from + 1) .. '-1' then return {0, top, epoch} end
local out = {found, top, epoch}
for _, e in ipairs(entries) do
  if tonumber(e[2][4]) <= now then return {0, top, epoch} end
  out[#out + 1] = e[2][2]
end
return out`);

/** Latest position. KEYS: meta, stream. ARGV: fresh epoch, epochTtlMs. Returns {top, epoch}. */
export const LATEST = script(`${ENSURE_META}
local epoch = ensure_meta(ARGV[1], tonumber(ARGV[2]))
return {read_top(), epoch}`);

/**
 * Heartbeat and live-node list. KEYS: nodes. ARGV: nodeId ('' only to read), ttlMs.
 * Drops expired nodes; returns `{ live, dropped, added }`: the live ones, those this call
 * dropped (only one caller ever gets a given dead node), and 1 when the calling node was
 * not in the set (its first beat, or the others took it for dead meanwhile).
 */
export const HEARTBEAT = script(`${NOW}
local added = 0
if ARGV[1] ~= '' then added = redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) end
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
return {redis.call('ZRANGE', KEYS[1], 0, -1), dead, added}`);

/** Take a lease. KEYS: lease, nodes. ARGV: nodeId, ttlMs. A dead holder's lease is free. */
export const ACQUIRE = script(`local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  ${NOW}
  local live = redis.call('ZSCORE', KEYS[2], holder)
  if live and tonumber(live) > now then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`);

/** Extend a lease held by ARGV[1] for ARGV[2] ms. KEYS: lease. */
export const RENEW = script(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`);

/** Drop a lease held by ARGV[1]. KEYS: lease. */
export const RELEASE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`);

/**
 * A node claims a handed-over session. KEYS: the session's record, its adopter, its mail.
 * ARGV: nodeId, the adopter's ttlMs. Returns {1, record, mail} (taken: record and mail
 * deleted, the adopter written), {2, adopter} when another node took it before, {0} for neither.
 */
export const CLAIM_SESSION = script(`local record = redis.call('GET', KEYS[1])
if record then
  local mail = redis.call('LRANGE', KEYS[3], 0, -1)
  redis.call('DEL', KEYS[1], KEYS[3])
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
  return {1, record, mail}
end
local owner = redis.call('GET', KEYS[2])
if owner then return {2, owner} end
return {0}`);

/**
 * A direct message for a session not on the sender's node. KEYS: the session's record, its
 * adopter, its mail. ARGV: the message, the most messages kept, the mail's ttlMs without a
 * record. The message is appended to the mail (the oldest dropped past the cap), which then
 * expires with the record when one waits — returns {1}: the claim takes it — else after
 * the ttl; returns {2, adopter} when a node adopted the session, {0} otherwise.
 */
export const ROUTE_DIRECT = script(`redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[2]), -1)
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[3], ttl)
  return {1}
end
redis.call('PEXPIRE', KEYS[3], ARGV[3])
local owner = redis.call('GET', KEYS[2])
if owner then return {2, owner} end
return {0}`);

/** Takes a session's mail. KEYS: its mail. Returns the messages, oldest first, and deletes them. */
export const TAKE_MAIL = script(`local mail = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return mail`);

/**
 * A node occupies a channel. KEYS: the channel's set of occupying nodes. ARGV: nodeId.
 * Returns 1 when the set was empty before (the channel became occupied), else 0: one
 * atomic step, so of nodes racing exactly one sees the transition.
 */
export const OCCUPY = script(`if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('SCARD', KEYS[1]) == 1 then return 1 end
return 0`);

/** A node (or, for a dead one, a sweeper) vacates a channel. As OCCUPY: 1 when it left it empty. */
export const VACATE = script(`if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('SCARD', KEYS[1]) == 0 then return 1 end
return 0`);

/** Runs `s` by SHA, loading it first when Redis does not know it (a restart flushed it). */
export async function runScript(
  client: RedisClient,
  s: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return client.eval(s.source, keys.length, ...keys, ...args);
  }
}
