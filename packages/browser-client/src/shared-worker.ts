/**
 * `bayou-shared-worker.js`: the hub of a shared connection in a SharedWorker, for apps that
 * serve this file and pass its URL as `sharedWorker`. The first tab hands it the client's
 * URL and options; the worker takes the leader lock and runs the hub (`shared/hub.ts`) on
 * the same BroadcastChannel the tabs speak, so no tab has to lead and a closed tab never
 * costs a takeover. Should the worker go, a tab in the lock's queue leads as without it.
 */
import { Hub, randomId } from './shared/hub.js';
import { isToHub, type Wire } from './shared/wire.js';
import type { WorkerStart } from './shared/worker-start.js';

const scope = globalThis as unknown as { onconnect: ((event: MessageEvent) => void) | null };
let started = false;

scope.onconnect = (event) => {
  const port = event.ports[0];
  if (port === undefined) return;
  port.onmessage = (m: MessageEvent<WorkerStart>) => start(m.data);
  port.start();
};

function start({ url, options, name }: WorkerStart): void {
  if (started) return;
  started = true;
  const channel = new BroadcastChannel(name);
  const id = randomId();
  navigator.locks.request(name, () => {
    const hub = new Hub(
      url,
      options,
      id,
      (tab) => `${name}\n${tab}`,
      (m) => channel.postMessage(m),
    );
    channel.onmessage = (e: MessageEvent<Wire>) => {
      if (isToHub(e.data)) hub.handle(e.data);
    };
    // The tabs may hold positions already (a worker started after a tab led): gather them.
    hub.start(true);
    // Held for the worker's life.
    return new Promise<never>(() => {});
  });
}
