/** The chat demo's composition root: `@bayou/server`, the chat service and the page, on one Fastify app. */
import { fileURLToPath } from 'node:url';
import { type BayouOptions, type BayouServer, createServer } from '@bayou/server';
import type { ChatRoomsOptions } from './chat-rooms.js';
import { ChatService, PRESENCE_RULE } from './chat-service.js';
import { serveStatic } from './static-files.js';
import { tokenRoute } from './token-route.js';

export interface ChatServerOptions {
  /** Interface to listen on. Default `'127.0.0.1'`. */
  host?: string;
  /** Port; `0` picks a free one. Default `8080`. */
  port?: number;
  /** Folder of the built page. Default: `public/` beside the built server (`dist/public`). */
  publicDir?: string;
  /** Bayou options other than the chat's own hooks (e.g. a shorter `maxInterval` in tests). */
  bayou?: Omit<BayouOptions, 'authenticate' | 'canSubscribe' | 'canPublish'>;
  /** History size and room bound. */
  rooms?: ChatRoomsOptions;
  /**
   * Require a token in every handshake (`ext.auth.token`, HS256 signed with this secret,
   * as `bayou start --jwt-secret` does); the user is the token's `sub`. The chat's own
   * `POST /chat/token` issues them. Default: none — an open demo where names are claimed.
   */
  jwtSecret?: string;
  /** Seconds a token from `POST /chat/token` lasts. Default `600`. */
  tokenTtl?: number;
}

export interface ChatServer extends BayouServer {
  readonly chat: ChatService;
}

export async function createChatServer(options: ChatServerOptions = {}): Promise<ChatServer> {
  const chat = new ChatService(options.rooms);
  const tokens = options.jwtSecret !== undefined;
  const given = options.bayou?.auth;
  const server = await createServer({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 8080,
    ...options.bayou,
    auth: {
      ...given,
      // Bayou keeps who is in each room: subscribers of `/chat/<room>` are its members.
      channels: { ...given?.channels, rules: [PRESENCE_RULE, ...(given?.channels?.rules ?? [])] },
      ...(tokens ? { tokens: { secret: options.jwtSecret as string } } : {}),
    },
    ...chat.hooks({ tokens }),
  });
  chat.attach(server.bayou);
  serveStatic(server.app, options.publicDir ?? fileURLToPath(new URL('./public/', import.meta.url)));
  tokenRoute(server.app, options.jwtSecret, options.tokenTtl ?? 600);
  return Object.assign(server, { chat });
}
