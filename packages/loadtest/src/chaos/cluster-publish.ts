/** The chaos run's publisher: one numbered message through the cluster's `POST /api/publish`. */

/** Whether the cluster acknowledged it (200); a refusal, an error or 10 s without an answer is not. */
export async function publishOne(base: string, key: string, channel: string, seq: number): Promise<boolean> {
  try {
    const r = await fetch(`${base}/api/publish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel, data: { seq, t: Date.now() } }),
      signal: AbortSignal.timeout(10_000),
    });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}
