/**
 * Moving back to a preferred transport. While the connection is on a fallback, the probe
 * opens the preferred transport beside it after a growing delay and sends a `/meta/connect`
 * for the same session over it. Once that is answered the session's delivery has moved
 * (the server ends the connect or stream held on the old transport); the old transport
 * only drains what was in flight, so no message is lost or delivered twice.
 */
import type { Backoff } from './backoff.js';
import type { Dispatcher } from './dispatcher.js';
import { BayouError, ErrorCodes } from './errors.js';
import type { TransportSelector } from './transport-selector.js';
import type { Transport, TransportContext, TransportFactory } from './transports/transport.js';
import type { Message } from './types.js';

/** What the probe needs of the connection. */
export interface ProbeHost {
  /** Bumped on every reconnect and stop: a probe of an older epoch gives up. */
  readonly epoch: number;
  readonly active: Transport | null;
  /** Sends the probing `/meta/connect` (answered at once) on `transport`. */
  probeConnect(transport: Transport): Promise<Message>;
  /** The probe was answered: `transport` carries the session from now on. */
  moved(transport: Transport, reply: Message): void;
  /** The old transport has drained: the connect loop carries on, on the new one. */
  carryOn(epoch: number): void;
}

export interface ProbeSettings {
  readonly wsOpenTimeout: number;
  readonly connectTimeout: number;
}

export class TransportProbe {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private probing: Transport | null = null;

  constructor(
    private readonly host: ProbeHost,
    private readonly selector: TransportSelector,
    private readonly backoff: Backoff,
    private readonly dispatcher: Dispatcher,
    private readonly context: TransportContext,
    private readonly settings: ProbeSettings,
  ) {}

  /** While on a fallback transport, tries the preferred one again after a growing delay. */
  schedule(epoch: number): void {
    const active = this.host.active;
    if (!active || this.timer !== undefined || this.probing) return;
    const better = this.selector.better(active.name);
    if (!better) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run(better, epoch);
    }, this.backoff.next());
  }

  /** Stops probing: the timer, and a probe under way. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const probing = this.probing;
    this.probing = null;
    probing?.close();
  }

  private async run(factory: TransportFactory, epoch: number): Promise<void> {
    const transport = factory.create(this.context);
    this.probing = transport;
    try {
      await transport.open(this.settings.wsOpenTimeout);
      if (epoch !== this.host.epoch) throw new Error('stale');
      const reply = await this.host.probeConnect(transport);
      if (epoch !== this.host.epoch || !reply.successful) throw new Error('refused');
      this.probing = null;
      const old = this.host.active;
      this.selector.promote(factory.name);
      this.host.moved(transport, reply);
      if (old) {
        // The server answered the connect held on the old transport: its reply (the next
        // batch, with acks) is on its way. The next connect reports what was received, so
        // it waits for that reply, or for the old transport to fail.
        await new Promise<void>((resolve) => {
          old.drain(resolve);
          setTimeout(resolve, this.settings.connectTimeout);
        });
        if (epoch !== this.host.epoch || this.host.active !== transport) return;
      }
      this.host.carryOn(epoch);
    } catch {
      if (this.probing === transport) this.probing = null;
      transport.close();
      this.dispatcher.fail(transport, new BayouError(ErrorCodes.TRANSPORT, 'probe failed'), true);
      if (epoch === this.host.epoch) this.schedule(epoch);
    }
  }
}
