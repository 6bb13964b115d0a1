/**
 * Defaults of what only a standalone server has — `createServer` and `bayou start` — defined
 * with every other default in `defaults.ts`.
 */
import { SERVER_DEFAULTS } from './defaults.js';

export const STANDALONE_DEFAULTS = SERVER_DEFAULTS.standalone;
