/** `/service/...` handlers by channel or pattern (`/service/chat/*`). */
import { expandChannel } from '@bayou/protocol';
import type { ServiceHandler } from './events.js';

export class ServiceRegistry {
  private readonly handlers = new Map<string, ServiceHandler>();

  has(channel: string): boolean {
    return this.handlers.has(channel);
  }

  set(channel: string, handler: ServiceHandler): void {
    this.handlers.set(channel, handler);
  }

  lookup(channel: string): ServiceHandler | undefined {
    const exact = this.handlers.get(channel);
    if (exact !== undefined || this.handlers.size === 0) return exact;
    for (const name of expandChannel(channel)) {
      const h = this.handlers.get(name);
      if (h !== undefined) return h;
    }
    return undefined;
  }
}
