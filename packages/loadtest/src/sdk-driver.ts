/**
 * Real `@bayou/client` instances as load-test clients, with `ws` injected as the chaos run
 * does: the path an application gets from the SDK (its batching, its extensions, its
 * parsing), not the lean driver's: as it ships (acknowledged delivery in numbered frames,
 * recovery), with CometD's acknowledgement in connect replies instead, or with ack and
 * recovery off. One instance costs far more than a lean-driver client, so runs spread them
 * over `--workers` processes.
 */
import { BayouClient, type BayouClientOptions, longPolling, streaming, websocket } from '@bayou/client';
import WebSocket from 'ws';
import { type Driver, type DriverFactory, type DriverOptions, deliverPayload } from './driver.js';
import type { Transport } from './options.js';

/** Where a frame carries a test payload: `{"i":` is in every loadtest message's data. */
const PAYLOAD_MARK = Buffer.from('"i":');

/**
 * A `ws` WebSocket bound to `localAddress` (so thousands of clients find ports) that counts
 * the frames carrying test messages, the SDK having no per-frame hook of its own.
 */
function countingSocket(localAddress: string | undefined, onFrame: (() => void) | undefined) {
  return class SdkSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, localAddress === undefined ? {} : { localAddress });
      if (onFrame !== undefined) this.on('message', (data: Buffer) => countFrame(data, onFrame));
    }
  };
}

function countFrame(data: Buffer, onFrame: () => void): void {
  if (data.includes(PAYLOAD_MARK)) onFrame();
}

/** The SDK's transport for `--transport`, alone (it has no EventSource transport). */
function sdkTransports(transport: Transport): NonNullable<BayouClientOptions['transports']> {
  if (transport === 'long-polling') return [longPolling];
  if (transport === 'websocket') return [websocket];
  if (transport === 'streaming') return [streaming];
  throw new Error(`the @bayou/client driver has no ${transport} transport`);
}

class SdkDriver implements Driver {
  private readonly clients: (BayouClient | undefined)[] = [];
  private closing = false;

  constructor(
    private readonly options: DriverOptions,
    private readonly transport: Transport,
    private readonly features: Pick<BayouClientOptions, 'ack' | 'ackFrames' | 'recover'>,
  ) {}

  async open(index: number): Promise<void> {
    const { localAddresses, onFrame } = this.options;
    const local = localAddresses.length > 0 ? localAddresses[index % localAddresses.length] : undefined;
    const options: BayouClientOptions = {
      transports: sdkTransports(this.transport),
      WebSocket: countingSocket(local, onFrame) as unknown as BayouClientOptions['WebSocket'],
      ...this.features,
      ...(this.options.handshakeExt ? { handshake: { ...this.options.handshakeExt } } : {}),
    };
    const client = new BayouClient(this.options.url, options);
    this.clients[index] = client;
    let connected = false;
    client.on('state', (state) => {
      if (state === 'connected') connected = true;
      else if (connected && !this.closing) {
        connected = false;
        this.options.onSessionLost?.(index);
      }
    });
    await client.connect();
  }

  async subscribe(index: number, channels: readonly string[]): Promise<void> {
    const client = this.clientAt(index);
    const sink = this.options.sink;
    await Promise.all(channels.map((ch) => client.subscribe(ch, (m) => deliverPayload(sink, m.data)).ready));
  }

  publish(index: number, channel: string, dataJson: string): void {
    // A refused publish shows as messages lost, which the run counts.
    this.clientAt(index)
      .publish(channel, JSON.parse(dataJson))
      .catch(() => {});
  }

  connected(): number {
    let n = 0;
    for (const c of this.clients) if (c !== undefined && c.state === 'connected') n++;
    return n;
  }

  async close(): Promise<void> {
    this.closing = true;
    const all = this.clients.filter((c): c is BayouClient => c !== undefined);
    // Bounded: a server that is already gone must not hold the run up.
    await Promise.race([
      Promise.all(all.map((c) => c.disconnect().catch(() => {}))),
      new Promise((r) => setTimeout(r, 3000).unref()),
    ]);
  }

  private clientAt(index: number): BayouClient {
    const client = this.clients[index];
    if (client === undefined) throw new Error(`client ${index} is not open`);
    return client;
  }
}

/** The SDK as it ships: acknowledged delivery (numbered frames over WebSocket) and recovery on. */
export function sdkDefaults(transport: Transport): DriverFactory {
  return (options) => new SdkDriver(options, transport, { ack: true, ackFrames: true, recover: true });
}

/** Acknowledged delivery as CometD does it (only in connect replies), and recovery on. */
export function sdkConnectAck(transport: Transport): DriverFactory {
  return (options) => new SdkDriver(options, transport, { ack: true, ackFrames: false, recover: true });
}

/** The SDK with acknowledged delivery and recovery off. */
export function sdkPlain(transport: Transport): DriverFactory {
  return (options) => new SdkDriver(options, transport, { ack: false, recover: false });
}
