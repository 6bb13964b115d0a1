/**
 * The OpenAPI document (`openapi.json`) describes the whole HTTP API: every route a
 * `bayou start` server registers (with the API key set, so the publish and server APIs are
 * on) is in it with its method, every documented operation exists, and every `$ref` resolves.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildServer } from '../src/config/build-server.js';
import type { BayouConfig } from '../src/config/define-config.js';

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
}
const doc = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as Doc;
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options'];

/** `METHOD /path` for every route in Fastify's route tree (HEAD, added by Fastify to GETs, left out). */
function registered(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
    if (m === null) continue;
    const depth = (m[1] as string).length / 4;
    const parent = stack[depth - 1] ?? '';
    const segment = m[2] as string;
    const path =
      parent === '' || parent.endsWith('/') || segment.startsWith('/')
        ? parent + segment
        : `${parent}/${segment}`;
    stack[depth] = path;
    stack.length = depth + 1;
    for (const method of (m[3] ?? '').split(', ').filter((x) => x !== '' && x !== 'HEAD'))
      out.push(`${method} ${path.replace(/\/\*$/, '/{messageType}')}`);
  }
  return out;
}

function documented(): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((k) => METHODS.includes(k))
      .map((k) => `${k.toUpperCase()} ${path}`),
  );
}

describe('the OpenAPI document', () => {
  it('lists every route the server registers, and nothing it does not', async () => {
    const config = {
      port: 0,
      apiKey: 'k'.repeat(16),
      logLevel: 'silent',
      admin: { enabled: true, password: 'p'.repeat(12) },
    } as BayouConfig;
    const built = await buildServer(config, false);
    try {
      await built.server.app.ready();
      const routes = registered(built.server.app.printRoutes({ commonPrefix: false }));
      expect(routes.length).toBeGreaterThanOrEqual(15);
      const inDoc = new Set(documented());
      for (const route of routes) expect(inDoc, `${route} is not in openapi.json`).toContain(route);
      expect(new Set(routes)).toEqual(inDoc);
    } finally {
      await built.server.close();
    }
  });

  it('is OpenAPI 3.1 and every $ref points at a component that exists', () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const refs = JSON.stringify(doc).match(/"#\/components\/[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      const [, , kind, name] = ref.slice(1, -1).split('/') as [string, string, string, string];
      expect(doc.components[kind]?.[name], ref).toBeDefined();
    }
  });
});
