/**
 * The carrier seam (docs/ARCHITECTURE.md, *The carrier seam*): the kernel, the extensions
 * and the session read what a carrier can do, never a connection-type name; every
 * connection type has a declared kind; the console's counters come through its constructor.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { NodeWatch, sourcesOf } from '../src/admin/node-stats.js';
import { BayouError } from '../src/errors.js';
import { connectionTypes } from '../src/transports/carrier-kinds.js';
import { TRANSPORT_NAMES } from '../src/types.js';

const SRC = new URL('../src/', import.meta.url).pathname;
const NAMED = /'(streaming|eventsource|long-polling|websocket)'/;

function sources(dir: string): string[] {
  return readdirSync(join(SRC, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(SRC, dir, f));
}

describe('the carrier seam', () => {
  it('keeps connection-type names out of the kernel, the extensions (wherever they live) and the session', () => {
    // The protocol extensions outside extensions/ too (ordered long-polling, deltas).
    const more = ['cluster/ordered-long-polling.ts', 'delta/delta-extension.ts'].map((f) => join(SRC, f));
    const files = [...['kernel', 'extensions', 'session'].flatMap(sources), ...more];
    expect(files.length).toBeGreaterThan(20);
    const naming = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => `${file.slice(SRC.length)}:${i + 1}: ${line.trim()}`)
        .filter((line) => NAMED.test(line)),
    );
    expect(naming).toEqual([]);
  });

  it('the check finds a name where one is written', () => {
    expect(NAMED.test("if (request.transport === 'streaming') return;")).toBe(true);
  });

  it('declares a kind for every connection type, and none for an unknown one', () => {
    for (const name of TRANSPORT_NAMES) expect(connectionTypes(name)?.name).toBe(name);
    expect(connectionTypes('callback-polling')).toBeUndefined();
    expect(connectionTypes(undefined)).toBeUndefined();
    const streams = TRANSPORT_NAMES.map((n) => connectionTypes(n)).filter((k) => k?.keepsSession);
    // A stream carries the server's frames only and pushes them.
    for (const k of streams) expect([k?.unidirectional, k?.pushes]).toEqual([true, true]);
  });

  it("refuses the console's counters of an app without the Bayou plugin, with the fix", () => {
    const app = Fastify();
    expect(() => sourcesOf(app)).toThrow(BayouError);
    expect(() => sourcesOf(app)).toThrow(/register the Bayou plugin/);
    // NodeWatch takes them in its constructor: nothing is registered behind its back.
    expect(NodeWatch.length).toBe(3);
  });
});
