/** "Did you mean": the closest name by edit distance, if it is close enough to be a typo. */

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] as number;
      row[j] = Math.min(cur + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] as number;
}

export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = distance(name.toLowerCase(), c.toLowerCase());
    if (d < bestScore) {
      best = c;
      bestScore = d;
    }
  }
  // A typo, not a different word: at most a third of the name (and at least 2 edits) apart,
  // and not every character changed (`b` is no typo of `a`); failing that, a flag the name
  // starts (`--jwt` for `--jwt-secret`).
  if (best !== undefined && bestScore < name.length && bestScore <= Math.max(2, Math.floor(name.length / 3)))
    return best;
  return name.length >= 3 ? candidates.find((c) => c.startsWith(name)) : undefined;
}
