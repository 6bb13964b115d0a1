declare module 'faye' {
  import type { Server } from 'node:http';
  export class NodeAdapter {
    constructor(options: { mount: string; timeout?: number });
    attach(server: Server): void;
    getClient(): { publish(channel: string, data: unknown): PromiseLike<unknown> };
  }
  const faye: { NodeAdapter: typeof NodeAdapter };
  export default faye;
}
