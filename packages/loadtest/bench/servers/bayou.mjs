// Bayou (@bayou/server) with both transports, no logger.
import { createServer } from '@bayou/server';
import { announce } from './common.mjs';

const server = await createServer({
  host: '127.0.0.1',
  port: 0,
  path: '/bayeux',
  transports: ['websocket', 'long-polling'],
  timeout: 30000,
  logger: false,
});
const base = await server.listen();
announce(`${base}/bayeux`);
