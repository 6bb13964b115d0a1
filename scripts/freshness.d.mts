/** Why `pnpm install` must run for `npm start`/`npm run grid`, or `null` when it may be skipped. */
export declare function installReason(root: string): string | null;
/** Why the build must run for `npm start`/`npm run grid`, or `null` when it may be skipped. */
export declare function buildReason(root: string): string | null;
/** Stamps a successful install (node_modules/.bayou-installed). */
export declare function markInstalled(root: string): void;
/** Stamps a successful build (node_modules/.bayou-built). */
export declare function markBuilt(root: string): void;
