/**
 * Retries `check` every `everyMs` (default 20) until it returns a value other than `false`
 * without throwing, and resolves with that value; rejects after `timeoutMs` (default
 * 10,000) with the check's last error or a message naming `what`.
 */
export declare function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs?: number,
  what?: string,
  everyMs?: number,
): Promise<Exclude<T, false>>;
