/** Which clients a part runs and which rooms each client joins: seeded, so every worker agrees. */

export interface Slice {
  /** First and one-past-last client index of this part. */
  lo: number;
  hi: number;
  worker: number;
  workers: number;
}

/** mulberry32: a small seeded PRNG, so every worker derives the same room assignment. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks `k` distinct numbers of [0, n) for each of `count` clients. */
export function assignGroups(count: number, n: number, k: number, seed: number): Uint16Array[] {
  const rnd = seededRandom(seed);
  const out: Uint16Array[] = [];
  for (let i = 0; i < count; i++) {
    const picked = new Set<number>();
    while (picked.size < k) picked.add(Math.floor(rnd() * n));
    out.push(Uint16Array.from(picked));
  }
  return out;
}

/** Members per group under an assignment. */
export function groupSizes(groups: readonly Uint16Array[], n: number): Uint32Array {
  const sizes = new Uint32Array(n);
  for (const g of groups) for (const r of g) sizes[r]!++;
  return sizes;
}
