/**
 * Hostile input at the wire, over both transports: a 20,000-deep body, and fast-check
 * batches (random and mutated Bayeux messages, channel names, ext objects) sent on a live
 * session. Every message gets a reply (or the transport an error), nothing answers 500,
 * and the server keeps serving. Fixed seed and bounded runs; FUZZ_RUNS / FUZZ_SEED widen it.
 */
import { decodeBatch } from '@bayou/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';
import { type Msg, TestClient, type Transport } from './test-client.js';

const runs = Number(process.env.FUZZ_RUNS ?? 40);
const seed = Number(process.env.FUZZ_SEED ?? 424242);

const segment = fc.stringMatching(/^[A-Za-z0-9_.-]{1,6}$/);
const channel = fc.oneof(
  fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`),
  fc.constantFrom('/meta/handshake', '/meta/subscribe', '/meta/unsubscribe', '/meta/disconnect', '/meta/x'),
  fc.constantFrom('/service/echo', '/service/none', '/a/*', '/a/**', '/**', '/', '//', 'x', ''),
  fc.string({ maxLength: 12 }),
);
const junk = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined));
const message = fc.record(
  {
    channel: fc.oneof(channel, junk),
    subscription: fc.oneof(channel, fc.array(channel, { maxLength: 3 }), junk),
    data: junk,
    ext: fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 })), junk),
    version: fc.constantFrom('1.0', '2', 1, undefined),
    supportedConnectionTypes: fc.oneof(fc.constant(['websocket', 'long-polling']), junk),
    clientId: fc.oneof(fc.constant('SESSION'), fc.string({ maxLength: 8 }), junk),
  },
  { requiredKeys: [] },
);

describe.each<Transport>(['websocket', 'long-polling'])('hostile input over %s', (transport) => {
  let s: Started;
  let c: TestClient;
  beforeAll(async () => {
    s = await startServer();
    s.server.bayou.service('/service/echo', (data) => data);
    c = new TestClient(s.base, transport);
    await c.connect();
  });
  afterAll(async () => {
    await c.close();
    await s.server.close();
  });

  async function stillServing(): Promise<void> {
    const probe = new TestClient(s.base, transport);
    expect(await probe.connect()).toMatchObject({ successful: true });
    await probe.close();
    expect((await fetch(`${s.base}/healthz`)).status).toBe(200);
  }

  it('answers a 20,000-deep body with an error, not a stack overflow', async () => {
    const text = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const r = await c.sendRaw(text);
    if (transport === 'long-polling') {
      expect(r.status).toBe(400);
      expect(r.body).toMatch(/nested deeper than 64 levels/);
    } else {
      const m = await c.waitFor((x) => x.successful === false && String(x.error).includes('nested deeper'));
      expect(m.error).toMatch(/^400:.*:message_invalid$/);
    }
    await stillServing();
  });

  it('answers every message of random batches, and never with a 500', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 5 }), async (batch) => {
        // Held connects are not part of this: every other message is answered at once.
        const msgs = batch
          .filter((m) => m.channel !== '/meta/connect')
          .map((m) => {
            // Any channel value, typed or not: the wire carries whatever the generator made.
            const out: Record<string, unknown> = { ...m, id: `f${++n}` };
            if (out.clientId === 'SESSION') out.clientId = c.clientId;
            return out as Msg;
          });
        if (msgs.length === 0) return;
        const text = JSON.stringify(msgs);
        const replies = msgs.map(
          (m) =>
            new Promise<Msg>((resolve) =>
              c.waitFor((r) => r.id === m.id && r.successful !== undefined).then(resolve),
            ),
        );
        const r = await c.sendRaw(text);
        if (transport === 'long-polling') expect(r.status).toBe(200);
        const answered = await Promise.all(replies);
        for (const reply of answered) {
          if (reply.successful === false) expect(String(reply.error)).toMatch(/^\d{3}:[^:]*:[a-z_]+$/);
        }
      }),
      { numRuns: runs, seed },
    );
    await stillServing();
  });

  it('answers mutated batch texts with replies or a transport error', async () => {
    const base = JSON.stringify([
      { channel: '/meta/subscribe', clientId: 'X', subscription: '/a', id: '1' },
      { channel: '/a/b', clientId: 'X', data: { text: 'hi', n: [1, 2] }, id: '2', ext: { k: 'v' } },
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            at: fc.nat({ max: base.length }),
            cut: fc.nat({ max: 3 }),
            insert: fc.string({
              unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', ':', 'x', '1', ' '),
            }),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        async (edits) => {
          let text = base;
          for (const e of edits) text = text.slice(0, e.at) + e.insert + text.slice(e.at + e.cut);
          const decoded = decodeBatch(text);
          if (transport === 'long-polling') {
            const r = await c.sendRaw(text);
            expect(r.status).toBe(decoded.ok ? 200 : 400);
            return;
          }
          if (decoded.ok) {
            // Tag the frame with a trailing probe whose reply proves the frame was processed.
            const probeId = `p${Math.random()}`;
            const tagged = decoded.messages.concat([{ channel: '/meta/unsubscribe', id: probeId }]);
            const seen = c.waitFor((m) => m.id === probeId);
            await c.sendRaw(JSON.stringify(tagged));
            await seen;
          } else {
            const before = c.received.length;
            await c.sendRaw(text);
            await c.waitFor(
              (m) => c.received.indexOf(m) >= before && m.successful === false && m.id === undefined,
            );
          }
        },
      ),
      { numRuns: runs, seed },
    );
    await stillServing();
  });
});
