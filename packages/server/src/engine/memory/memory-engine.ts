/** The default engine: one process, delivery is a direct call. */
import type { DeliveryHandler, Engine } from '../engine.js';

export class MemoryEngine implements Engine {
  private handler: DeliveryHandler | null = null;

  async start(handler: DeliveryHandler): Promise<void> {
    this.handler = handler;
  }

  publish(channel: string, json: string): void {
    this.handler?.(channel, json);
  }

  interest(_name: string, _present: boolean): void {}

  async close(): Promise<void> {
    this.handler = null;
  }
}
