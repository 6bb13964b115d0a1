// The part of Faye 1.4 (which ships no types) the bench servers use.
declare module 'faye' {
  import type { Server } from 'node:http';

  class NodeAdapter {
    constructor(options: { mount: string; timeout: number });
    attach(server: Server): void;
  }
  const faye: { NodeAdapter: typeof NodeAdapter };
  export default faye;
}
