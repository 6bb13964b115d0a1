/**
 * The names of everything the engine keeps in Redis. A channel's keys and its pub/sub
 * name share the hash tag `{channel}`, so on a Redis Cluster the publish script touches
 * one slot; the cluster-wide control keys (live nodes, leases) share the tag `{ctl}`.
 * Channel names cannot contain braces (the Bayeux grammar forbids them).
 *
 *   <p>{/a/b}:meta      hash: epoch, top (last offset)        TTL max(ttlMs, epochTtlMs)
 *   <p>{/a/b}:stream    stream of the latest messages         MAXLEN size, TTL ttlMs
 *
 * Every history key carries a TTL refreshed by each publish, so an idle channel leaves
 * nothing behind, and a Redis under `maxmemory` with a `volatile-*` policy may evict
 * them: a missing meta makes a new epoch, a missing stream answers `recovered: false`.
 *   <p>{/a/b}:image     hash: record field → JSON value
 *   <p>{/a/b}:counts    hash: nodeId → subscriber count
 *   <p>{/a/b}:members   hash: clientId → JSON [nodeId, info]
 *   <p>{/a/b}:occupied  set: nodes with subscribers of /a/b (channel occupancy)
 *   <p>{/a/b}           pub/sub name of the channel or wildcard name /a/b
 *   <p>{ctl}:nodes      sorted set: nodeId → expiry time of its liveness
 *   <p>{ctl}:lease:<n>  string: the nodeId holding lease n     PX ttl
 *   <p>{ctl}:occupiers  set: nodes that occupy channels (swept when they die)
 *   <p>{node:<id>}:occupies  set: the channels node <id> occupies
 *   <p>{node:<id>}:probe  pub/sub name of node <id>'s delivery probes
 *   <p>{node:<id>:<k>}:probe  on a Redis Cluster, node <id>'s probe name for one shard
 *   <p>{session:<clientId>}:handover  string: a session handed over at a drain   PX maxInterval
 *   <p>{session:<clientId>}:mail  list: direct messages not yet taken   PX as its record, or maxInterval
 *   <p>{session:<clientId>}:owner  string: the nodeId that adopted it      PX a day, or until it ends
 *   <p>{node:<id>}:presence  hash: "<clientId> <channel>" → JSON [nodeId, info, user] of the
 *                       members node <id> joined, so whoever finds it dead reports them left
 */
export class RedisKeys {
  constructor(private readonly prefix: string) {}

  meta(channel: string): string {
    return `${this.prefix}{${channel}}:meta`;
  }
  stream(channel: string): string {
    return `${this.prefix}{${channel}}:stream`;
  }
  image(subject: string): string {
    return `${this.prefix}{${subject}}:image`;
  }
  counts(channel: string): string {
    return `${this.prefix}{${channel}}:counts`;
  }
  members(channel: string): string {
    return `${this.prefix}{${channel}}:members`;
  }
  occupied(channel: string): string {
    return `${this.prefix}{${channel}}:occupied`;
  }
  get occupiers(): string {
    return `${this.prefix}{ctl}:occupiers`;
  }
  occupies(nodeId: string): string {
    return `${this.prefix}{node:${nodeId}}:occupies`;
  }
  /** The pub/sub name carrying publications for channel or wildcard name `name`. */
  topic(name: string): string {
    return `${this.prefix}{${name}}`;
  }
  /** The Bayeux name behind a pub/sub name made by `topic`, or null. */
  nameOfTopic(topic: string): string | null {
    if (!topic.startsWith(`${this.prefix}{`) || !topic.endsWith('}')) return null;
    return topic.slice(this.prefix.length + 1, -1);
  }
  get nodes(): string {
    return `${this.prefix}{ctl}:nodes`;
  }
  lease(name: string): string {
    return `${this.prefix}{ctl}:lease:${name}`;
  }
  /** The pub/sub name node <id> sends its delivery probes to (`redis-probe.ts`). */
  probe(nodeId: string): string {
    return `${this.prefix}{node:${nodeId}}:probe`;
  }
  /** Probe name number `k` of node <id>, each hashing to some shard (`redis-shard-probes.ts`). */
  shardProbe(nodeId: string, k: number): string {
    return `${this.prefix}{node:${nodeId}:${k}}:probe`;
  }
  handover(clientId: string): string {
    return `${this.prefix}{session:${clientId}}:handover`;
  }
  /** Direct messages for a session, until the node holding it (or claiming it) takes them (`redis-handover.ts`). */
  sessionMail(clientId: string): string {
    return `${this.prefix}{session:${clientId}}:mail`;
  }
  sessionOwner(clientId: string): string {
    return `${this.prefix}{session:${clientId}}:owner`;
  }
  nodePresence(nodeId: string): string {
    return `${this.prefix}{node:${nodeId}}:presence`;
  }
}
