import { readFileSync } from 'node:fs';

const snap = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const f = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const nf = f.length;
const iType = f.indexOf('type'),
  iName = f.indexOf('name'),
  iSize = f.indexOf('self_size');
const agg = new Map();
const nodes = snap.nodes,
  strings = snap.strings;
for (let i = 0; i < nodes.length; i += nf) {
  const t = types[nodes[i + iType]];
  const name = t === 'object' || t === 'closure' ? strings[nodes[i + iName]] : t;
  const k = t + ':' + name;
  const a = agg.get(k) ?? [0, 0];
  a[0] += nodes[i + iSize];
  a[1]++;
  agg.set(k, a);
}
const N = Number(process.argv[3]);
console.log(
  [...agg]
    .sort((a, b) => b[1][0] - a[1][0])
    .slice(0, 30)
    .map(([k, [s, c]]) => `${(s / N).toFixed(0).padStart(6)} B/sess ${String(c).padStart(8)} ${k}`)
    .join('\n'),
);
