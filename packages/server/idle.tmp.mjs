import { fork } from 'node:child_process';
import WebSocket from 'ws';

if (process.argv[2] === 'server') {
  const { createServer } = await import('./dist/index.js');
  const s = await createServer({ host: '127.0.0.1', port: 0, timeout: 30000 });
  const base = await s.listen();
  process.send({ base });
  process.on('message', async (m) => {
    gc();
    gc();
    if (m === 'snap') {
      const v8 = await import('node:v8');
      v8.writeHeapSnapshot('/tmp/bayou.heapsnapshot');
    }
    process.send({ heap: process.memoryUsage().heapUsed, sessions: s.bayou.sessionCount });
  });
} else {
  const N = Number(process.argv[2] ?? 3000);
  const child = fork(new URL(import.meta.url).pathname, ['server'], { execArgv: ['--expose-gc'] });
  const { base } = await new Promise((r) => child.once('message', r));
  const mem = () =>
    new Promise((r) => {
      child.once('message', r);
      child.send('m');
    });
  const m0 = await mem();
  const sockets = [];
  for (let i = 0; i < N; i += 100) {
    await Promise.all(
      Array.from(
        { length: 100 },
        () =>
          new Promise((resolve) => {
            const ws = new WebSocket(base.replace('http', 'ws') + '/bayeux');
            sockets.push(ws);
            let id;
            ws.on('open', () =>
              ws.send(
                JSON.stringify([
                  { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['websocket'] },
                ]),
              ),
            );
            ws.on('message', (d) => {
              for (const m of JSON.parse(d)) {
                if (m.channel === '/meta/handshake') {
                  id = m.clientId;
                  ws.send(
                    JSON.stringify([
                      { channel: '/meta/connect', clientId: id, connectionType: 'websocket' },
                      { channel: '/meta/subscribe', clientId: id, subscription: '/room/' + (i % 100) },
                    ]),
                  );
                } else if (m.channel === '/meta/subscribe') {
                  ws.send(
                    JSON.stringify([{ channel: '/meta/connect', clientId: id, connectionType: 'websocket' }]),
                  );
                  resolve();
                }
              }
            });
          }),
      ),
    );
  }
  await new Promise((r) => setTimeout(r, 500));
  const m1 = await mem();
  if (process.argv[3] === 'snap')
    await new Promise((r) => {
      child.once('message', r);
      child.send('snap');
    });
  console.log(`sessions ${m1.sessions}  heap/session ${((m1.heap - m0.heap) / N / 1024).toFixed(2)} KB`);
  for (const ws of sockets) ws.terminate();
  child.kill();
}
