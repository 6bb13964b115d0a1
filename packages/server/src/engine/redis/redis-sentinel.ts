/**
 * A Redis watched by Sentinel, named by URL:
 * `redis+sentinel://[user:password@]host:port[,host:port…]/<master name>[/<db>]`.
 * The hosts are the Sentinels; the credentials are the Redis servers' (Sentinels with
 * their own password take ioredis' `sentinelPassword` through the `redis` options).
 * ioredis asks the Sentinels where the master is, and moves to the new master after a
 * failover: at once when a Sentinel announces it (`failoverDetector`), else when the old
 * master drops the connection.
 */
import type { RedisOptions } from 'ioredis';

/** Whether `url` names a Redis through its Sentinels. */
export function isSentinelUrl(url: string): boolean {
  return url.startsWith('redis+sentinel://');
}

/** What URL forms the engine takes, for error messages. */
export const URL_FORMS = 'a redis://, rediss:// or redis+sentinel://host:port[,host:port…]/<master name> URL';

/** The ioredis options of a `redis+sentinel://` URL; throws a TypeError saying what is wrong. */
export function sentinelOptions(url: string): RedisOptions {
  const m = /^redis\+sentinel:\/\/(?:([^@/]*)@)?([^/@]+)\/([^/?#]+)(?:\/(\d+))?\/?$/.exec(url);
  if (m === null) {
    throw new TypeError(`got "${url}"`);
  }
  const [, auth, hosts = '', name = '', db] = m;
  const sentinels = hosts.split(',').map((h) => {
    const hp = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(h);
    if (hp === null) throw new TypeError(`Sentinel "${h}" is not host:port`);
    return { host: (hp[1] as string).replace(/^\[|\]$/g, ''), port: Number(hp[2]) };
  });
  const options: RedisOptions = { sentinels, name: decodeURIComponent(name), failoverDetector: true };
  if (db !== undefined) options.db = Number(db);
  if (auth !== undefined) {
    const colon = auth.indexOf(':');
    const user = colon < 0 ? '' : decodeURIComponent(auth.slice(0, colon));
    const password = decodeURIComponent(colon < 0 ? auth : auth.slice(colon + 1));
    if (user !== '') options.username = user;
    if (password !== '') options.password = password;
  }
  return options;
}
