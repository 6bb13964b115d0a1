/**
 * What one process lets connections hold: a cap on open connections (sockets) and a
 * deadline for a connection's first byte. File descriptors are the resource an idle
 * socket takes, and the per-IP limits count sessions, not sockets; so past
 * `maxConnections` a new connection is refused — its first request (a long-poll, a
 * WebSocket upgrade) is answered `503` with `Retry-After` and the connection closed, over
 * TLS it is closed at once — and one that sends nothing within `handshakeTimeout` is
 * closed. A refused connection is given `REFUSED_GRACE_MS` to send its request and read
 * the answer. A WebSocket that never completes a Bayeux handshake is the WebSocket
 * transport's to close (it knows when one did); both run from the plugin's connection
 * sweep (every 100 ms at most).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { CLOSES_PER_SWEEP, DeadlineQueue } from '../transports/deadline-queue.js';

/** ms a refused connection may stay open to send its request and read the `503`. */
export const REFUSED_GRACE_MS = 1000;
/** Seconds a refused client is told to wait (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 5;

const GUARD = Symbol('bayou.guard');
const REFUSED = Symbol('bayou.refused');
const PEER = Symbol('bayou.peer');
type Guarded = Socket & { [GUARD]?: ConnectionGuard; [REFUSED]?: true; [PEER]?: string };

export interface ConnectionGuardOptions {
  /** Open connections accepted; `0` = no cap. */
  maxConnections: number;
  /** ms a connection may stay silent (no byte received); `0` = no deadline. */
  handshakeTimeout: number;
  /** Open connections accepted from one peer address; `0` = no cap. */
  maxConnectionsPerIp?: number;
}

export interface ConnectionStats {
  /** Connections open now (accepted ones; refused ones are not counted). */
  open: number;
  /** Connections refused past `maxConnections`. */
  refused: number;
  /** Connections closed for sending nothing within `handshakeTimeout`. */
  silentClosed: number;
  /** Connections closed at accept past `maxConnectionsPerIp` (counted in `refused` too). */
  refusedPerIp: number;
}

/** Whether `socket` was refused: its request gets the `503` instead of being served. */
export function isRefused(socket: Duplex | null | undefined): boolean {
  return socket != null && (socket as Guarded)[REFUSED] === true;
}

function refusalBody(max: number): string {
  return JSON.stringify({
    error: `server at its connection limit (maxConnections ${max}): retry in ${RETRY_AFTER_SECONDS} s`,
  });
}

/** The raw HTTP answer to an upgrade on a refused connection. */
export function refusalResponse(max: number): string {
  const body = refusalBody(max);
  return `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: ${RETRY_AFTER_SECONDS}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

export class ConnectionGuard {
  readonly stats: ConnectionStats = { open: 0, refused: 0, silentClosed: 0, refusedPerIp: 0 };
  /** Open connections per peer address; an address leaves with its last connection. */
  private readonly perPeer = new Map<string, number>();
  private readonly silent: DeadlineQueue<Socket> | null;
  private readonly body: string;
  private readonly onConnection = (socket: Socket): void => this.accept(socket);

  constructor(
    private readonly server: Server,
    private readonly options: ConnectionGuardOptions,
    /** Over TLS nothing can be said before the TLS handshake: a refusal just closes. */
    private readonly tls: boolean,
  ) {
    this.silent = options.handshakeTimeout > 0 ? new DeadlineQueue(options.handshakeTimeout) : null;
    this.body = refusalBody(options.maxConnections);
    // First: a refused socket is marked before Node's HTTP parser sees it.
    server.prependListener('connection', this.onConnection);
  }

  private accept(socket: Socket): void {
    const max = this.options.maxConnections;
    if (max > 0 && this.stats.open >= max) {
      this.stats.refused++;
      if (this.tls) {
        socket.destroy();
        return;
      }
      (socket as Guarded)[REFUSED] = true;
      socket.setTimeout(REFUSED_GRACE_MS);
      socket.once('timeout', onRefusedTimeout);
      return;
    }
    const perIp = this.options.maxConnectionsPerIp ?? 0;
    if (perIp > 0) {
      const peer = socket.remoteAddress ?? '';
      const count = this.perPeer.get(peer) ?? 0;
      if (count >= perIp) {
        this.stats.refused++;
        this.stats.refusedPerIp++;
        socket.destroy();
        return;
      }
      this.perPeer.set(peer, count + 1);
      (socket as Guarded)[PEER] = peer;
    }
    this.stats.open++;
    (socket as Guarded)[GUARD] = this;
    // `on`, not `once`: a socket closes once, and `once` would keep a wrapper, a bound
    // function and its state (152 bytes) with every open connection.
    socket.on('close', onGuardedClose);
    this.silent?.add(socket, Date.now());
  }

  /** Answers a request that came on a refused connection (`true`), or leaves it (`false`). */
  refuse(req: IncomingMessage, res: ServerResponse): boolean {
    if ((req.socket as Guarded)[REFUSED] !== true) return false;
    res.writeHead(503, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(this.body),
      'retry-after': String(RETRY_AFTER_SECONDS),
      // HTTP/2 (h2c) has no Connection header: Node drops it there with a process warning.
      ...(req.httpVersionMajor < 2 ? { connection: 'close' } : {}),
    });
    res.end(this.body);
    return true;
  }

  /** Closes connections that sent nothing within `handshakeTimeout`. Called by the shared sweep. */
  sweep(now: number): void {
    this.silent?.expire(
      now,
      (socket) => {
        if (socket.destroyed || socket.bytesRead > 0) return;
        this.stats.silentClosed++;
        socket.destroy();
      },
      CLOSES_PER_SWEEP,
    );
  }

  /** Peer addresses with open connections counted (bounded by the open connections). */
  get peers(): number {
    return this.perPeer.size;
  }

  /** A guarded connection closed: its peer's count goes down, and the peer with its last one. */
  closed(socket: Guarded): void {
    this.stats.open--;
    const peer = socket[PEER];
    if (peer === undefined) return;
    const count = (this.perPeer.get(peer) ?? 1) - 1;
    if (count > 0) this.perPeer.set(peer, count);
    else this.perPeer.delete(peer);
  }

  /**
   * Stops guarding. A connection that has still sent nothing is destroyed: it has no
   * request an idle-connection close would see, so the server's close would wait for it.
   */
  close(): void {
    this.server.off('connection', this.onConnection);
    this.silent?.expire(Number.POSITIVE_INFINITY, destroySilent);
  }
}

/**
 * Hands the counting out of a guarded socket over to its new owner, which then calls
 * `guardedClosed` when it is done with it: an upgraded WebSocket's socket has `ws`'s own
 * `close` listener, and two listeners on one event cost an array (64 bytes a socket for as
 * long as it is open); the link's `close` comes right after the socket's. No-op for a
 * socket the guard did not count.
 */
export function handOverClose(socket: Socket): void {
  if ((socket as Guarded)[GUARD] !== undefined) socket.off('close', onGuardedClose);
}

/** A socket handed over by `handOverClose` closed: the guard counts it out (once). */
export function guardedClosed(socket: Socket): void {
  onGuardedClose.call(socket as Guarded);
}

function onGuardedClose(this: Guarded): void {
  const guard = this[GUARD];
  if (guard === undefined) return;
  // Counted out once, whatever emits `close` again.
  this[GUARD] = undefined;
  guard.closed(this);
}

function destroySilent(socket: Socket): void {
  if (!socket.destroyed && socket.bytesRead === 0) socket.destroy();
}

function onRefusedTimeout(this: Socket): void {
  this.destroy();
}
