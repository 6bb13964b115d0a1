/**
 * The chaos balancers' health check (`round-robin.ts` in its own processes, the nginx
 * balancer from the run's parent): every node's `/readyz` asked each `READY_POLL_MS`, as a
 * Kubernetes Service or a balancer's health check does. A draining node turns not ready
 * first, so it gets no new request; what it holds stays where it is.
 */

/** How often each node's readiness is asked, ms. */
export const READY_POLL_MS = 500;

/**
 * Asks every port's `/readyz` each `pollMs` and calls `report(port, ready)` with each
 * answer: one that answers other than 200, or refuses the connection, counts as not ready;
 * one too busy to answer within 2 s is not reported (a loaded node is not a draining one).
 * Returns the function that stops it.
 */
export function watchReadiness(
  ports: readonly number[],
  report: (port: number, ready: boolean) => void,
  pollMs = READY_POLL_MS,
): () => void {
  const ask = (port: number) =>
    fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })
      .then(async (r) => {
        await r.arrayBuffer();
        report(port, r.status === 200);
      })
      .catch((err: Error & { cause?: { code?: string } }) => {
        if (err.cause?.code === 'ECONNREFUSED') report(port, false);
      });
  let asking = false;
  const timer = setInterval(() => {
    if (asking) return;
    asking = true;
    void Promise.all(ports.map(ask)).finally(() => {
      asking = false;
    });
  }, pollMs);
  timer.unref();
  return () => clearInterval(timer);
}
