import { readFileSync } from 'node:fs';

const snap = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const f = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const nf = f.length;
const iType = f.indexOf('type'),
  iName = f.indexOf('name'),
  iSize = f.indexOf('self_size');
const want = process.argv[3];
const agg = new Map();
for (let i = 0; i < snap.nodes.length; i += nf) {
  if (types[snap.nodes[i + iType]] !== want) continue;
  let name = snap.strings[snap.nodes[i + iName]];
  name = name.length > 40 ? name.slice(0, 20) + '…' + name.length : name;
  const key = name.replace(/[A-Za-z0-9_-]{20,}/g, '<id>');
  const a = agg.get(key) ?? [0, 0];
  a[0] += snap.nodes[i + iSize];
  a[1]++;
  agg.set(key, a);
}
console.log(
  [...agg]
    .sort((a, b) => b[1][0] - a[1][0])
    .slice(0, 25)
    .map(([k, [s, c]]) => `${String(s).padStart(9)} ${String(c).padStart(7)} ${JSON.stringify(k)}`)
    .join('\n'),
);
