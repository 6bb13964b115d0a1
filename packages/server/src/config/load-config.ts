/** Reads a config file: a JS module exporting the config as default, or JSON. */
import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { configError } from './flags.js';

/**
 * The fix for a config module that imports `@bayou/server` where it is not installed (run
 * through `npx @bayou/server start`, the package is in npx's cache, not importable from
 * the file's folder): `defineConfig` only types the object, so the import can go.
 */
function importFix(err: unknown): string {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' || typeof message !== 'string' || !message.includes("'@bayou/server'"))
    return '';
  return ' — install it next to the file (npm install @bayou/server), or drop the import: defineConfig only gives the object its type, so `export default { port: 8080 }` works alone; or use a JSON config (--config bayou.config.json)';
}

export async function loadConfigFile(file: string, cwd = process.cwd()): Promise<Record<string, unknown>> {
  const path = resolve(cwd, file);
  const ext = extname(path).toLowerCase();
  let value: unknown;
  if (ext === '.json') {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw configError(`cannot read config ${file}: ${(err as Error).message}`);
    }
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw configError(`config ${file} is not valid JSON: ${(err as Error).message}`);
    }
  } else if (ext === '.mjs' || ext === '.js' || ext === '.cjs') {
    let mod: { default?: unknown };
    try {
      mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
    } catch (err) {
      throw configError(`cannot load config ${file}: ${(err as Error).message}${importFix(err)}`);
    }
    value = mod.default;
    if (typeof value === 'function') value = await (value as () => unknown)();
  } else {
    throw configError(`config ${file}: use a .mjs/.js module (export default defineConfig({...})) or .json`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw configError(`config ${file} must ${ext === '.json' ? 'hold' : 'export default'} an object`);
  return value as Record<string, unknown>;
}
