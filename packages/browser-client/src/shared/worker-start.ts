/** A tab's side of the SharedWorker hub (`src/shared-worker.ts`). */
import type { BayouClientOptions } from '../options.js';

/** What a tab sends the worker on its port. */
export interface WorkerStart {
  url: string;
  options: BayouClientOptions;
  name: string;
}

/**
 * Starts (or joins) the SharedWorker hub when `sharedWorker` names its script and the
 * options can go there; `null` otherwise (options that are not plain data, such as a token
 * function or transports, or no SharedWorker): then a tab leads.
 */
export function startWorker(url: string, options: BayouClientOptions, name: string): SharedWorker | null {
  if (options.sharedWorker === undefined || typeof SharedWorker !== 'function') return null;
  try {
    const start: WorkerStart = {
      url: new URL(url, location.href).href,
      options: structuredClone(options),
      name,
    };
    const worker = new SharedWorker(new URL(options.sharedWorker, location.href).href, { name });
    worker.port.postMessage(start);
    return worker;
  } catch {
    return null;
  }
}
