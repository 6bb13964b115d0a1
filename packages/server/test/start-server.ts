import { type BayouServer, type CreateServerOptions, createServer } from '../src/index.js';

export interface Started {
  server: BayouServer;
  base: string;
}

export async function startServer(options: CreateServerOptions = {}): Promise<Started> {
  const server = await createServer({
    host: '127.0.0.1',
    port: 0,
    timeout: 2000,
    sweepInterval: 50,
    ...options,
  });
  const base = await server.listen();
  return { server, base };
}
