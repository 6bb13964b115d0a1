// Provisions the external programs the test suites need (headless Chromium for browser
// tests), installing them through apt-get when missing. Under CI a service that cannot be
// provisioned is a failure, never a silent skip: the suites that need it check the
// variables exported here and fail when they are absent under CI=true.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

let aptUpdated = false;
function aptInstall(pkgs) {
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
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
};

export async function provisionServices({ ci }) {
  const env = {};
  if (wanted.chromium) {
    if (!existsSync('/usr/bin/chromium')) {
      console.log('[services] installing chromium through apt-get');
      if (!aptInstall(['chromium']) && ci) throw new Error('chromium could not be installed');
    }
    if (existsSync('/usr/bin/chromium')) env.CHROMIUM_PATH = '/usr/bin/chromium';
  }
  return { env, stop: async () => {} };
}
