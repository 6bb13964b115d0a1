// The server side of shared-connection.mjs, in a process of its own so that its CPU is
// measured alone: @bayou/server (built) on loopback, the test page and the shared bundle,
// and on request a numbered stream on /feed at a fixed rate, reporting its own CPU time,
// sessions, open TCP connections and deliveries.
import { readFileSync } from 'node:fs';
import { createServer } from '@bayou/server';

// ws: every transport; nows: WebSocket off (the HTTP fallback); h2: that over HTTP/2 with TLS
// (the key and certificate files follow).
const mode = process.argv[2];
const websocket = mode === 'ws';
const tls =
  mode === 'h2' ? { key: readFileSync(process.argv[3]), cert: readFileSync(process.argv[4]) } : null;
const bundle = readFileSync(new URL('../dist/bayou-shared.min.js', import.meta.url));
const PAGE = `<!doctype html><meta charset="utf-8"><script src="/b.js"></script><script>
  window.got = 0;
  window.start = function (options) {
    const client = new Bayou.BayouClient('/bayeux', options);
    client.subscribe('/feed', function () { window.got++; });
    client.connect().catch(function () {});
    window.client = client;
  };
</script>`;

const server = await createServer({
  host: '127.0.0.1',
  port: 0,
  transports: websocket ? ['websocket', 'streaming', 'long-polling'] : ['streaming', 'long-polling'],
  ...(tls !== null ? { https: tls, http2: true } : {}),
});
server.app.get('/', (_req, reply) => reply.type('text/html').send(PAGE));
server.app.get('/b.js', (_req, reply) => reply.type('text/javascript').send(bundle));
let connections = 0;
server.app.server.on(tls !== null ? 'secureConnection' : 'connection', (socket) => {
  connections++;
  socket.on('close', () => connections--);
});
const base = await server.listen();
const bayou = server.bayou;
process.send?.({ base });

process.on('message', (m) => {
  if (m.cmd === 'subscribers')
    process.send?.({ subscribers: bayou.subscriberCount('/feed'), sessions: bayou.sessionCount });
  if (m.cmd === 'run') {
    const before = bayou.stats().messagesOut;
    const cpu = process.cpuUsage();
    let n = 0;
    const perTick = Math.max(1, Math.round(m.rate / 100));
    const timer = setInterval(() => {
      for (let i = 0; i < perTick; i++) bayou.publish('/feed', { n: ++n, pad: 'x'.repeat(64) });
    }, 10);
    setTimeout(() => {
      clearInterval(timer);
      // Whatever the last publishes cause is counted too.
      setTimeout(() => {
        const used = process.cpuUsage(cpu);
        process.send?.({
          published: n,
          cpuUs: used.user + used.system,
          sessions: bayou.sessionCount,
          connections,
          delivered: bayou.stats().messagesOut - before,
        });
      }, 1000);
    }, m.seconds * 1000);
  }
  if (m.cmd === 'stop') server.close().then(() => process.exit(0));
});
