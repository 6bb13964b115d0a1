/**
 * A script call written straight onto the command connection's socket, beside ioredis'
 * reply queue: the publish script's hot path. Through ioredis each call builds a
 * `Command` (argument flattening, a promise with reply conversion), arms a timer for
 * `commandTimeout`, serializes its arguments and goes through `sendCommand`'s checks and
 * tracing: some 15 µs of a publication's node-side cost, as much as the rest of the
 * broker's own code. Here the `EVALSHA` is serialized in one pass (its fixed head made
 * once per script), written to the same socket (corked per turn, as ioredis' commands
 * are), and its entry put in ioredis' queue of commands in flight, so the reply parser
 * settles it in order with every other command on that connection; one timer per
 * connection stands in for the per-command timers. Anything that cannot go this way
 * (not ready, a Redis Cluster client, ioredis options that act per command: `keyPrefix`,
 * `reconnectOnError`, `socketTimeout`, auto-pipelining, resending after a reconnect, which
 * the engine turns off) goes through ioredis as before,
 * and so does the `EVAL` after a `NOSCRIPT` (a restarted Redis).
 *
 * What this relies on of ioredis (5.x, checked by `redis-direct-call.test.ts`): the
 * `commandQueue` of `{ command, stream, select }` entries whose `command` the reply
 * parser settles with `resolve(reply)` (reply in Buffers) or `reject(err)`, and which a
 * lost connection rejects.
 */
import type { Redis } from 'ioredis';
import { type RedisClient, runScript, type Script } from './redis-scripts.js';

/** The parts of an ioredis command in flight that ioredis touches after it was written. */
interface QueuedCall {
  readonly name: 'evalsha';
  readonly args: readonly unknown[];
  readonly inTransaction: false;
  resolve(reply: unknown): void;
  reject(err: Error): void;
}

/** What is read of an ioredis client here (non-public parts of its 5.x implementation). */
interface ClientInternals {
  status: string;
  stream?: { writable?: boolean; writableEnded?: boolean; write(chunk: string): boolean };
  condition?: { select?: number; subscriber?: unknown } | null;
  commandQueue?: { push(entry: { command: QueuedCall; stream: undefined; select: number }): unknown };
  options?: {
    keyPrefix?: string;
    reconnectOnError?: unknown;
    socketTimeout?: number;
    enableAutoPipelining?: boolean;
    autoResendUnfulfilledCommands?: boolean;
  };
}

/** A call in flight: when it was written, and how to fail it. */
interface InFlight {
  readonly at: number;
  settled: boolean;
  readonly fail: (err: Error) => void;
}

/** `$<bytes>\r\n<arg>\r\n`: one RESP bulk string. */
function bulk(arg: string): string {
  return `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
}

/** A reply as ioredis hands it with `utf8` reply encoding: Buffers (also nested) as strings. */
function utf8(reply: unknown): unknown {
  if (Buffer.isBuffer(reply)) return reply.toString();
  if (!Array.isArray(reply)) return reply;
  const out: unknown[] = new Array(reply.length);
  for (let i = 0; i < reply.length; i++) out[i] = utf8(reply[i]);
  return out;
}

/** Whether `client` can take a call written beside its queue now. */
function directable(client: RedisClient): client is Redis {
  const c = client as unknown as ClientInternals;
  const o = c.options;
  if (c.status !== 'ready' || c.commandQueue === undefined || o === undefined) return false;
  if (o.keyPrefix || o.reconnectOnError || o.socketTimeout !== undefined || o.enableAutoPipelining)
    return false;
  // A call resent after a reconnect would need to be an ioredis command (the engine never resends).
  if (o.autoResendUnfulfilledCommands !== false) return false;
  const s = c.stream;
  return s !== undefined && s.writable === true && s.writableEnded !== true && !c.condition?.subscriber;
}

export class DirectScriptCalls {
  /** Script SHA → the serialized head of its `EVALSHA` without the argument count. */
  private readonly heads = new Map<string, string>();
  /** Calls in flight, in the order written (replies come back in that order). */
  private readonly inFlight: InFlight[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly expire = (): void => {
    this.timer = null;
    const now = performance.now();
    const q = this.inFlight;
    while (q.length > 0) {
      const first = q[0] as InFlight;
      if (!first.settled && now - first.at < this.timeoutMs) break;
      q.shift();
      if (!first.settled) {
        first.settled = true;
        first.fail(new Error('Command timed out'));
      }
    }
    this.arm();
  };

  constructor(
    /** How long a call may wait for its reply (the engine's `commandTimeoutMs`). */
    private readonly timeoutMs: number,
  ) {}

  /** Runs `s` by SHA on `client`, written directly when it can be; as `runScript` otherwise. */
  run(
    client: RedisClient,
    s: Script,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    if (!directable(client)) return runScript(client, s, keys, args);
    return this.write(client, s, keys, args).catch((err: unknown) => {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return client.eval(s.source, keys.length, ...keys, ...args);
    });
  }

  /** The engine stopped: no timer outlives it (what is in flight fails with the connection). */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Calls written directly and not answered yet (for tests). */
  pending(): number {
    let n = 0;
    for (const call of this.inFlight) if (!call.settled) n++;
    return n;
  }

  private write(
    client: Redis,
    s: Script,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    const c = client as unknown as Required<Pick<ClientInternals, 'stream' | 'commandQueue'>> &
      ClientInternals;
    let head = this.heads.get(s.sha);
    if (head === undefined) {
      head = `${bulk('EVALSHA')}${bulk(s.sha)}`;
      this.heads.set(s.sha, head);
    }
    let out = `*${3 + keys.length + args.length}\r\n${head}${bulk(String(keys.length))}`;
    for (let i = 0; i < keys.length; i++) out += bulk(keys[i] as string);
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string | number;
      out += bulk(typeof a === 'string' ? a : String(a));
    }
    return new Promise<unknown>((resolve, reject) => {
      const call: InFlight = { at: performance.now(), settled: false, fail: reject };
      const command: QueuedCall = {
        name: 'evalsha',
        args: [],
        inTransaction: false,
        resolve: (reply) => {
          if (call.settled) return; // timed out meanwhile: the caller was told
          call.settled = true;
          this.drop();
          resolve(utf8(reply));
        },
        reject: (err) => {
          if (call.settled) return;
          call.settled = true;
          this.drop();
          reject(err);
        },
      };
      c.stream.write(out);
      c.commandQueue.push({ command, stream: undefined, select: c.condition?.select ?? 0 });
      this.inFlight.push(call);
      this.arm();
    });
  }

  /**
   * Forgets the settled calls at the front (replies settle them in order). The timer stays:
   * re-arming one per call would cost what ioredis' per-command timers cost; it fires once
   * per timeout at most and then finds nothing to do.
   */
  private drop(): void {
    const q = this.inFlight;
    while (q.length > 0 && (q[0] as InFlight).settled) q.shift();
  }

  /** One timer, for the oldest call in flight. */
  private arm(): void {
    if (this.timer !== null || this.inFlight.length === 0) return;
    const wait = (this.inFlight[0] as InFlight).at + this.timeoutMs - performance.now();
    this.timer = setTimeout(this.expire, Math.max(0, wait));
    this.timer.unref?.();
  }
}
