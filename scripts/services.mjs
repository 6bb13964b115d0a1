// Provisions the external programs the test suites need (headless Chromium for browser
// tests, redis-server for the Redis engine suites, which start their own on a free port,
// nginx for the cluster suite that runs the shipped deploy/cluster/nginx.conf),
// installing them through apt-get when missing. Under CI a service that cannot be
// provisioned is a failure, never a silent skip: the suites that need it check the
// variables exported here and fail when they are absent under CI=true.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

let aptUpdated = false;
function aptInstall(pkgs) {
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  // RUNLEVEL=1: invoke-rc.d starts no service (redis-server, nginx) after installing it;
  // the tests start their own, on their own ports.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', RUNLEVEL: '1' };
  const exec = (args) =>
    spawnSync(sudo[0] ?? args[0], sudo.length ? args : args.slice(1), { stdio: 'inherit', env });
  if (!aptUpdated) {
    exec(['apt-get', 'update', '-qq']);
    aptUpdated = true;
  }
  const r = exec(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...pkgs]);
  return r.status === 0;
}

/** Which services the suites need; packages add theirs here as they arrive. */
const wanted = {
  chromium: existsSync(new URL('../packages/browser-client/test', import.meta.url)),
  redis: existsSync(new URL('../packages/server/test/engine-redis.test.ts', import.meta.url)),
  nginx:
    existsSync(new URL('../packages/server/test/cluster-nginx.test.ts', import.meta.url)) ||
    existsSync(new URL('../packages/loadtest/test/nginx-balancer.test.ts', import.meta.url)),
};

/** The first `name` on PATH (or in the usual sbin directories), or undefined. */
function findProgram(name) {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Finds `program` (installing Debian's `pkg` when missing) and names it in `env[envVar]`. */
function provisionProgram(program, pkg, envVar, { ci, env }) {
  let path = process.env[envVar] || findProgram(program);
  if (path === undefined) {
    console.log(`[services] installing ${pkg} through apt-get`);
    if (!aptInstall([pkg]) && ci) throw new Error(`${pkg} could not be installed`);
    path = findProgram(program);
  }
  if (path !== undefined) env[envVar] = path;
  else if (ci) throw new Error(`${program} is not on PATH after installing it`);
}

export async function provisionServices({ ci }) {
  const env = {};
  if (wanted.chromium) provisionProgram('chromium', 'chromium', 'CHROMIUM_PATH', { ci, env });
  if (wanted.redis) provisionProgram('redis-server', 'redis-server', 'REDIS_SERVER_PATH', { ci, env });
  if (wanted.nginx) provisionProgram('nginx', 'nginx', 'NGINX_PATH', { ci, env });
  return { env, stop: async () => {} };
}
