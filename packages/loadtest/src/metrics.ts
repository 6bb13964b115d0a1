/**
 * Reads a server's Prometheus text /metrics (Bayou exposes prom-client's defaults plus
 * bayou_*). Servers without /metrics simply yield undefined.
 */

export interface ServerSample {
  cpuSeconds?: number;
  rssBytes?: number;
  /** Proportional set size over the process tree (`--server-pid`, at the end of a hold): shared pages once. */
  pssBytes?: number;
  heapUsedBytes?: number;
  sessions?: number;
  messagesOut?: number;
  /** Set when memory and CPU were read from /proc over this many processes (`--server-pid`). */
  processes?: number;
}

/** Sums every sample of each metric name (labels are ignored). */
export function parsePrometheus(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const value = Number(m[3]);
    if (Number.isFinite(value)) out.set(m[1]!, (out.get(m[1]!) ?? 0) + value);
  }
  return out;
}

export function sampleFromMetrics(metrics: Map<string, number>): ServerSample {
  return {
    cpuSeconds: metrics.get('process_cpu_seconds_total'),
    rssBytes: metrics.get('process_resident_memory_bytes'),
    heapUsedBytes: metrics.get('nodejs_heap_size_used_bytes'),
    sessions: metrics.get('bayou_sessions'),
    messagesOut: metrics.get('bayou_messages_out_total'),
  };
}

/** The /metrics URL next to a Bayeux endpoint: same origin. */
export function metricsUrlFor(endpoint: string, configured: string): string | undefined {
  if (configured === 'off') return undefined;
  if (configured !== '') return configured;
  const u = new URL(endpoint.replace(/^ws(s?):/, 'http$1:'));
  return `${u.origin}/metrics`;
}

export async function fetchServerSample(url: string | undefined): Promise<ServerSample | undefined> {
  if (!url) return undefined;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return undefined;
    const sample = sampleFromMetrics(parsePrometheus(await res.text()));
    return sample.cpuSeconds === undefined && sample.rssBytes === undefined ? undefined : sample;
  } catch {
    return undefined;
  }
}
