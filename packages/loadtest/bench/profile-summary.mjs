#!/usr/bin/env node
// @ts-check
// Summarizes a `node --cpu-prof` profile: the functions with the most self time.
// usage: node bench/profile-summary.mjs <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';

/**
 * The parts of a V8 .cpuprofile read here.
 * @typedef {{ nodes: { id: number, callFrame: { functionName: string, url: string, lineNumber: number } }[], samples: number[], timeDeltas: number[] }} CpuProfile
 */

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [top=25]');
  process.exit(2);
}
/** @type {CpuProfile} */
const profile = JSON.parse(readFileSync(file, 'utf8'));
/** @type {Map<number, number>} node id → µs sampled in it */
const dt = new Map();
for (const [i, id] of profile.samples.entries()) {
  dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
/** @type {Map<string, number>} */
const byFunction = new Map();
let total = 0;
for (const node of profile.nodes) {
  const us = dt.get(node.id) ?? 0;
  total += us;
  const f = node.callFrame;
  const where = f.url
    ? `${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*packages\//, '')}:${f.lineNumber + 1}`
    : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
}
const rows = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 25));
console.log(`total sampled ${(total / 1e6).toFixed(2)} s`);
for (const [key, us] of rows)
  console.log(
    `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`,
  );
