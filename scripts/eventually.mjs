// The one polling wait of the repository's tests (every package and example re-exports
// it from its own test helpers). Prefer waiting on the event itself (a message, a
// 'close', a reply); poll only a state that announces no event (a gauge, a DOM, a count
// in another process). A check that keeps throwing fails the wait with its own error, so
// `eventually(() => expect(x).toBe(1))` reports what was last seen.

/**
 * Retries `check` every `everyMs` until it returns a value other than `false` (which it
 * resolves with) without throwing; rejects after `timeoutMs` with the check's last error
 * or a message naming `what`.
 */
export async function eventually(check, timeoutMs = 10_000, what = 'condition', everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value !== false) return value;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
