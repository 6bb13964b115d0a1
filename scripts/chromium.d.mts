/** Where Chromium is: CHROMIUM_PATH, default /usr/bin/chromium. */
export declare const CHROMIUM_PATH: string;
/** The command-line switches every test and bench passes to Chromium. */
export declare const CHROMIUM_ARGS: readonly string[];
/** Options for playwright-core's `chromium.launch()` or `launchPersistentContext()`; throws when Chromium is missing. */
export declare function chromiumOptions(): { executablePath: string; headless: true; args: string[] };
