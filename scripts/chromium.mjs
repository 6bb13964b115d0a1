// How every browser test and bench of the repository starts Chromium: the Debian build
// (CHROMIUM_PATH, default /usr/bin/chromium, which scripts/services.mjs installs when it
// is missing), headless, as root, with no network of its own. playwright-core never
// downloads a browser here: a missing one is an error that says how to install it.
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]);

/** Options for playwright-core's `chromium.launch()` or `launchPersistentContext()`. */
export function chromiumOptions() {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  }
  return { executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS] };
}
