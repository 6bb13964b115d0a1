/** The built entries start with the 'use client' directive, so a Next.js server component can import them. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const dist = join(import.meta.dirname, '../dist');
// A directive prologue: string-literal statements before any other code.
const directives = (code: string) =>
  [...code.matchAll(/^\s*(['"])([^'"]*)\1;?/gm)].map((m) => m[2]).slice(0, 3);

it.each(['index.js', 'index.cjs'])("dist/%s opens with 'use client'", (file) => {
  const code = readFileSync(join(dist, file), 'utf8');
  const prologue = code.slice(0, code.search(/^(?!\s*(['"])[^'"]*\1;?\s*$).+/m));
  expect(directives(prologue)).toContain('use client');
});
