/**
 * Preload for a storm run (`NODE_OPTIONS="--require …/upgrade-trace.cjs" UPGRADE_TRACE_DIR=<dir>`):
 * every Node process of the run writes one line per WebSocket upgrade it takes part in to
 * `<dir>/<pid>.up`, so a slow upgrade can be followed hop by hop across processes by its
 * TCP ports (times are epoch ms with a fraction):
 *
 * - `C <localPort> <created> <tcpConnected> <answered|-> <status|error>`: a client
 *   (`http.request` with `Upgrade: websocket`, as `ws` makes it): when the request was made,
 *   when its TCP connection was established (the kernel's handshake, not an accept), and
 *   when the server's answer (`101`, or another status) or the failure came.
 * - `S <remotePort> <localPort> <accepted> <upgradeEvent> <firstWrite|->`: a server
 *   (`http.Server`: a node, the balancer's workers): when this process got the connection
 *   (`'connection'`: for a `node:cluster` worker, when its primary handed it over), when
 *   the upgrade request was parsed, and when it first wrote to the socket (a node: its
 *   `101`; the balancer: the first bytes piped back from the node).
 * - `A <remotePort> <accepted>`: any connection an `http.Server` got (long-polls too).
 * - `P <remotePort> <handedOver>`: a `node:cluster` primary handing an accepted connection
 *   to a worker (the round-robin scheduling, as the balancer runs).
 * - `U <clientPort> <upstreamLocalPort> <upstreamPort> <started> <connected|-> <firstData|->`:
 *   the balancer's connection to a node for the upgrade of the client on `clientPort`.
 *
 * Without UPGRADE_TRACE_DIR it does nothing.
 */
const dir = process.env.UPGRADE_TRACE_DIR;
if (dir) {
  const fs = require('node:fs');
  const path = require('node:path');
  const http = require('node:http');
  const net = require('node:net');
  const { performance } = require('node:perf_hooks');
  const file = path.join(dir, `${process.pid}.up`);
  const now = () => (performance.timeOrigin + performance.now()).toFixed(1);
  // Written at once, line by line: a process starved of CPU for seconds, then killed, keeps its lines.
  const fd = fs.openSync(file, 'a');
  const out = { push: (line) => fs.writeSync(fd, `${line}\n`) };
  out.push(`# ${process.argv.slice(1).join(' ')}`);

  // A node:cluster primary handing an accepted connection to a worker (round-robin).
  const cluster = require('node:cluster');
  const fork = cluster.fork;
  cluster.fork = function tracedFork(...args) {
    const worker = fork.apply(this, args);
    const send = worker.process.send;
    worker.process.send = function tracedSend(...args) {
      const [message, handle] = args;
      if (message && message.act === 'newconn' && handle && typeof handle.getpeername === 'function') {
        const peer = {};
        handle.getpeername(peer);
        out.push(`P ${peer.port} ${now()}`);
      }
      return send.apply(this, args);
    };
    return worker;
  };

  const ACCEPTED = Symbol('accepted');
  /** The client port of the upgrade being handed to the 'upgrade' listeners (the balancer's connect). */
  let upgrading = null;

  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function traced(...args) {
    const [event, a, b] = args;
    if (event === 'connection') {
      a[ACCEPTED] = now();
      out.push(`A ${a.remotePort} ${a[ACCEPTED]}`);
    }
    if (event !== 'upgrade') return emit.apply(this, args);
    const socket = b;
    const line = ['S', socket.remotePort, socket.localPort, socket[ACCEPTED] ?? '-', now()];
    const own = socket.write;
    socket.write = function first(...written) {
      socket.write = own;
      out.push([...line, now()].join(' '));
      line.length = 0;
      return own.apply(this, written);
    };
    socket.once('close', () => {
      if (line.length > 0) out.push([...line, '-'].join(' '));
    });
    upgrading = socket.remotePort;
    try {
      return emit.apply(this, args);
    } finally {
      upgrading = null;
    }
  };

  const connect = net.connect;
  const traceConnect = function tracedConnect(...args) {
    const socket = connect.apply(this, args);
    if (upgrading === null) return socket;
    const line = ['U', upgrading, '-', '-', now(), '-', '-'];
    socket.once('connect', () => {
      line[2] = socket.localPort;
      line[3] = socket.remotePort;
      line[5] = now();
    });
    let pushed = false;
    const push = () => {
      if (pushed) return;
      pushed = true;
      out.push(line.join(' '));
    };
    socket.once('data', () => {
      line[6] = now();
      push();
    });
    socket.once('close', push);
    return socket;
  };
  net.connect = traceConnect;
  net.createConnection = traceConnect;
  require('node:module').syncBuiltinESMExports();

  const request = http.request;
  http.request = function tracedRequest(...args) {
    const req = request.apply(this, args);
    const options = args[0];
    const headers = options && typeof options === 'object' ? options.headers : undefined;
    const upgrade = headers && String(headers.Upgrade ?? headers.upgrade ?? '').toLowerCase();
    if (upgrade !== 'websocket') return req;
    const line = ['C', '-', now(), '-', '-', '-'];
    let done = false;
    const end = (status) => {
      if (done) return;
      done = true;
      line[4] = now();
      line[5] = status;
      out.push(line.join(' '));
    };
    req.once('socket', (s) => {
      s.once('connect', () => {
        line[1] = s.localPort;
        line[3] = now();
      });
    });
    req.once('upgrade', (res) => end(res.statusCode));
    req.once('response', (res) => end(res.statusCode));
    req.once('error', (err) => end(err.code ?? 'error'));
    req.once('close', () => end('closed'));
    return req;
  };
}
