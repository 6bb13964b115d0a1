/** The chat demo's composition root: `@bayou/server`, the chat service and the page, on one Fastify app. */
import { fileURLToPath } from 'node:url';
import { type BayouOptions, type BayouServer, createServer } from '@bayou/server';
import type { ChatRoomsOptions } from './chat-rooms.js';
import { ChatService } from './chat-service.js';
import { serveStatic } from './static-files.js';

export interface ChatServerOptions {
  /** Interface to listen on. Default `'0.0.0.0'`. */
  host?: string;
  /** Port; `0` picks a free one. Default `8080`. */
  port?: number;
  /** Folder of the built page. Default: `public/` beside the built server (`dist/public`). */
  publicDir?: string;
  /** Bayou options other than the chat's own hooks (e.g. a shorter `maxInterval` in tests). */
  bayou?: Omit<BayouOptions, 'authenticate' | 'canSubscribe' | 'canPublish'>;
  /** History size and room bound. */
  rooms?: ChatRoomsOptions;
}

export interface ChatServer extends BayouServer {
  readonly chat: ChatService;
}

export async function createChatServer(options: ChatServerOptions = {}): Promise<ChatServer> {
  const chat = new ChatService(options.rooms);
  const server = await createServer({
    host: options.host ?? '0.0.0.0',
    port: options.port ?? 8080,
    ...options.bayou,
    ...chat.hooks(),
  });
  chat.attach(server.bayou);
  serveStatic(server.app, options.publicDir ?? fileURLToPath(new URL('./public/', import.meta.url)));
  return Object.assign(server, { chat });
}
