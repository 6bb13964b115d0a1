/**
 * A guard for every package's tests (and the examples'): no sleep followed by an
 * assertion. "Sleep 300 ms, then expect nothing more arrived" passes vacuously on a slow
 * machine; wait for the event instead, or assert absence after a later message on the
 * same path (TestClient.drained, one more publish). A sleep that is the stimulus itself
 * (a load gauge fed idle time) says so on its line or the line above:
 * `// timed on purpose: <why no event stands for it>`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * A statement that only waits: a promise on setTimeout, sleep(), delay(), idle(), the
 * promise `setTimeout` of node:timers/promises, waitForTimeout().
 */
const SLEEP =
  /\bawait\s+(?:new Promise\(\(?(\w+)\)?\s*=>\s*setTimeout\(\1,[^;]*\)\)|(?:sleep|delay|idle|setTimeout)\(|[\w.]*waitForTimeout\()/;
const EXEMPT = /\/\/ timed on purpose: \S/;
/** A wait for an event (or a poll of a state): what follows it is no longer "after a sleep". */
const WAIT = /\b(?:eventually|waitFor|until|drained)\(/;
/** How many code lines after a sleep an assertion still counts as "then assert". */
const LOOKAHEAD = 3;

const isCode = (line: string): boolean => {
  const t = line.trim();
  return t !== '' && !t.startsWith('//') && !t.startsWith('*') && !/^[})\]]+[;,]?$/.test(t);
};

/** The comment lines right above line `i`. */
function commentAbove(lines: string[], i: number): string[] {
  const above: string[] = [];
  for (let j = i - 1; j >= 0 && (lines[j] as string).trim().startsWith('//'); j--)
    above.push(lines[j] as string);
  return above;
}

/** `file:line` of every sleep that an `expect(` follows within LOOKAHEAD code lines. */
export function sleepsThenAsserts(text: string, file: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    if (!SLEEP.test(line) || EXEMPT.test(line) || commentAbove(lines, i).some((l) => EXEMPT.test(l))) return;
    for (const next of lines
      .slice(i + 1)
      .filter(isCode)
      .slice(0, LOOKAHEAD)) {
      if (WAIT.test(next)) return; // it waits for an event before asserting
      if (next.includes('expect(')) {
        found.push(`${file}:${i + 1}`);
        return;
      }
    }
  });
  return found;
}

function testFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) testFiles(path, out);
    else if (/\.(test\.)?tsx?$/.test(entry.name) && (/\/test\//.test(path) || /\.test\.tsx?$/.test(path)))
      out.push(path);
  }
  return out;
}

describe('tests wait on events', () => {
  it('finds a sleep followed by an assertion, and lets a marked one or a poll pass', () => {
    const snippet = [
      "  await c.publish('/x', 1);",
      '  await new Promise((r) => setTimeout(r, 300));',
      '  // nothing else came',
      '  expect(c.received).toHaveLength(1);',
      '  await sleep(50); // timed on purpose: the stimulus is idle time',
      '  expect(gauge.busy()).toBe(false);',
      '  await setTimeout(100);',
      '  expect(c.received).toHaveLength(1);',
      '  await eventually(() => c.received.length === 1);',
      '  expect(c.received).toHaveLength(1);',
      '  for (let n = 0; n < 30; n++) {',
      '    await sleep(100);',
      '  }',
      '  await eventually(() => c.received.length === 30);',
      '  expect(c.received).toHaveLength(30);',
    ].join('\n');
    expect(sleepsThenAsserts(snippet, 'x.test.ts')).toEqual(['x.test.ts:2', 'x.test.ts:7']);
  });

  it('no test in the repository sleeps and then asserts', () => {
    const files = ['packages', 'examples'].flatMap((d) => testFiles(join(root, d)));
    expect(files.length).toBeGreaterThan(100);
    const self = fileURLToPath(import.meta.url);
    const found = files
      .filter((f) => f !== self)
      .flatMap((f) => sleepsThenAsserts(readFileSync(f, 'utf8'), relative(root, f)));
    expect(found, 'wait for the event, or assert absence after a later message on the same path').toEqual([]);
  });
});
