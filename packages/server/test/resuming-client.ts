/**
 * A long-polling Bayeux client for cluster tests that recovers as `@bayou/client` is
 * meant to: it negotiates ack (a lost connect reply is resent) and replay (positions on
 * every message), and after `402::session_unknown` it handshakes again and resubscribes
 * from the last position it saw, so the server replays what it missed from history. It
 * speaks the wire protocol with `fetch`, through whatever URL it is given (the balancer).
 */
type Msg = Record<string, unknown> & { channel?: string; successful?: boolean; error?: string };

interface Position {
  offset: number;
  epoch: string;
}

export class ResumingClient {
  /** The `n` of every message received on the channel, in arrival order. */
  readonly received: number[] = [];
  /** Successful handshakes (clientId and when). */
  readonly handshakes: { id: string; at: number }[] = [];
  /** Connect replies that said `402` with `reconnect: handshake`. */
  unknownSession = 0;
  /** Subscribe replies that said the gap could not be recovered. */
  gaps = 0;
  private clientId = '';
  private ack = 0;
  private position: Position | null = null;
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly channel: string,
  ) {}

  get nodeId(): string {
    return this.handshakes.at(-1)?.id.split('.')[0] ?? '';
  }

  async start(): Promise<void> {
    this.running = true;
    await this.handshake();
    this.loop = this.connectLoop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async post(messages: Msg[]): Promise<Msg[] | null> {
    try {
      const r = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(messages),
      });
      if (!r.ok) return null;
      return (await r.json()) as Msg[];
    } catch {
      return null;
    }
  }

  private async handshake(): Promise<void> {
    while (this.running) {
      const replies = await this.post([
        {
          channel: '/meta/handshake',
          version: '1.0',
          supportedConnectionTypes: ['long-polling'],
          ext: { ack: true, replay: true },
        },
      ]);
      const reply = replies?.find((m) => m.channel === '/meta/handshake');
      if (reply?.successful === true) {
        this.clientId = String(reply.clientId);
        this.ack = 0;
        this.handshakes.push({ id: this.clientId, at: Date.now() });
        if (await this.subscribe()) return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async subscribe(): Promise<boolean> {
    const ext = this.position === null ? undefined : { replay: { [this.channel]: this.position } };
    const replies = await this.post([
      {
        channel: '/meta/subscribe',
        clientId: this.clientId,
        subscription: this.channel,
        ...(ext ? { ext } : {}),
      },
    ]);
    if (replies === null) return false;
    this.take(replies);
    const reply = replies.find((m) => m.channel === '/meta/subscribe');
    const info = (reply?.ext as { replay?: Record<string, { recovered?: boolean }> } | undefined)?.replay?.[
      this.channel
    ];
    if (info?.recovered === false) this.gaps++;
    return reply?.successful === true;
  }

  private async connectLoop(): Promise<void> {
    while (this.running) {
      const replies = await this.post([
        {
          channel: '/meta/connect',
          clientId: this.clientId,
          connectionType: 'long-polling',
          ext: { ack: this.ack },
        },
      ]);
      if (replies === null) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      this.take(replies);
      const reply = replies.find((m) => m.channel === '/meta/connect');
      if (reply?.successful === true) {
        const ack = (reply.ext as { ack?: unknown } | undefined)?.ack;
        if (typeof ack === 'number') this.ack = ack;
      } else if ((reply?.advice as { reconnect?: string } | undefined)?.reconnect === 'handshake') {
        if (String(reply?.error).startsWith('402')) this.unknownSession++;
        await this.handshake();
      } else {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  private take(replies: Msg[]): void {
    for (const m of replies) {
      if (m.channel !== this.channel || m.successful !== undefined) continue;
      this.received.push((m.data as { n: number }).n);
      const pos = (m.ext as { replay?: Position } | undefined)?.replay;
      if (pos !== undefined) this.position = pos;
    }
  }
}
