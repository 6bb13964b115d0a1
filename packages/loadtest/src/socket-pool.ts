/** What the WebSocket-based drivers (Bayeux, Socket.IO) share about their sockets. */
import WebSocket from 'ws';

/** Sockets of a pool that are open. */
export function countOpen(sockets: readonly (WebSocket | undefined)[]): number {
  let n = 0;
  for (const ws of sockets) if (ws && ws.readyState === WebSocket.OPEN) n++;
  return n;
}

/** Terminates every socket of a pool and resolves once all have closed. */
export async function terminateAll(sockets: readonly (WebSocket | undefined)[]): Promise<void> {
  const closed: Promise<unknown>[] = [];
  for (const ws of sockets) {
    if (!ws || ws.readyState === WebSocket.CLOSED) continue;
    closed.push(new Promise((resolve) => ws.once('close', resolve)));
    ws.terminate();
  }
  await Promise.all(closed);
}
