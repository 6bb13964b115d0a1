/**
 * The Redis engine against a private redis-server: the whole contract suite unchanged,
 * then what only Redis has: an outage (Redis killed and started again, empty) and the
 * number of Redis commands per publish.
 */
import { afterAll, describe, it } from 'vitest';
import type { RedisEngineOptions } from '../src/engine/redis/index.js';
import { RedisEngine } from '../src/engine/redis/index.js';
import { engineContract } from './engine-contract.js';
import { ci, RedisServer, redisServerPath } from './redis-server.js';

const available = redisServerPath() !== null;

if (!available && ci) {
  describe('Redis engine', () => {
    it('needs redis-server under CI', () => {
      throw new Error('redis-server not found; scripts/services.mjs installs it through apt-get');
    });
  });
}

let server: Promise<RedisServer> | undefined;
let prefixes = 0;
afterAll(async () => {
  await (await server)?.stop();
});

/** Short heartbeats, so a crashed node's state expires within the suite's wait. */
export function testOptions(url: string): RedisEngineOptions {
  return {
    url,
    keyPrefix: `t${process.pid}.${++prefixes}:`,
    heartbeatMs: 50,
    nodeTtlMs: 300,
    commandTimeoutMs: 2000,
  };
}

/** Engines on the shared test server, each backend under its own key prefix. */
function redisFactory(name: string, extra: RedisEngineOptions) {
  return {
    name,
    expiryMs: 3000,
    async backend() {
      server ??= RedisServer.start();
      const options = { ...testOptions((await server).url), ...extra };
      return {
        create: () => new RedisEngine(options),
        // A killed process: connections drop, no goodbye; its state must expire.
        crash: async (engine: unknown) => (engine as RedisEngine).disconnect(),
        destroy: async () => undefined,
      };
    },
  };
}

if (available) {
  engineContract(redisFactory('redis', {}));
  // SSUBSCRIBE/SPUBLISH as on a Redis Cluster (a single redis-server 7 accepts them too).
  engineContract(redisFactory('redis, sharded pub/sub', { sharded: true }));
}
