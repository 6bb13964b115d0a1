/**
 * How many connections a Node server accepts per turn of a busy event loop:
 * `node bench/accept-per-turn.cjs [connections=400] [busyMs=20]`.
 *
 * A listening server whose loop spends `busyMs` of CPU in each turn (as a node, a balancer
 * worker or a client worker does under a storm) and a child process that opens
 * `connections` at once to it (the kernel completes every TCP handshake at once: they wait
 * in the accept queue). Prints how long until all were accepted, over how many turns, and
 * the most accepted in one turn. On Node 20 (libuv 1.46) it is one a turn: since libuv
 * 1.45 (libuv#3696, "unix: don't accept() connections in a loop") a listening socket gets
 * one `accept()` per wake-up of the poll and relies on the next turn for the next one; with
 * `busyMs` 20, 400 connections take 400 turns, about 8 s. `strace -f -e trace=accept4`
 * shows it: one `accept4` per wake-up, none answered `EAGAIN`.
 */
const net = require('node:net');
const { fork } = require('node:child_process');

const [countArg = '400', busyArg = '20', role] = process.argv.slice(2);
const count = Number(countArg);
const busy = Number(busyArg);

if (role === 'client') {
  process.on('message', (port) => {
    for (let i = 0; i < count; i++) net.connect(port, '127.0.0.1').on('error', () => undefined);
  });
} else {
  let accepted = 0;
  let first = 0;
  const perTurn = [];
  const server = net.createServer(() => {
    if (first === 0) first = Date.now();
    accepted++;
  });
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
    const client = fork(__filename, [countArg, busyArg, 'client']);
    client.send(server.address().port);
    let before = 0;
    const turn = () => {
      const end = Date.now() + busy;
      while (Date.now() < end);
      if (accepted > 0) perTurn.push(accepted - before);
      before = accepted;
      if (accepted < count) return setImmediate(turn);
      const turns = perTurn.filter((n) => n > 0).length;
      console.log(
        `busy ${busy} ms a turn: ${count} connections accepted in ${Date.now() - first} ms, ` +
          `over ${turns} turns, at most ${Math.max(...perTurn)} in one (node ${process.version}, libuv ${process.versions.uv})`,
      );
      client.kill();
      server.close();
    };
    setImmediate(turn);
  });
}
