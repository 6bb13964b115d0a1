/**
 * A quick look at the --url before a chaos run: the clients retry a server they cannot reach
 * for ever (that is what they are for), so an unreachable URL would otherwise hang the run.
 */
import { connect } from 'node:net';
import { LoadtestError, LoadtestErrors } from '../errors.js';

/** Throws a LoadtestError with the fix when nothing accepts a TCP connection at `url` within `ms`. */
export async function assertReachable(url: string, ms = 5000): Promise<void> {
  const u = new URL(url);
  const port = Number(u.port) || (u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80);
  // A TCP connect, not fetch(): fetch refuses some ports (1, 6000 ...) that a server may use.
  const socket = connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port, timeout: ms });
  const failure = await new Promise<string | null>((done) => {
    socket.once('connect', () => done(null));
    socket.once('timeout', () => done(`no answer in ${ms / 1000} s`));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
  socket.destroy();
  if (failure === null) return;
  throw new LoadtestError(
    LoadtestErrors.SETUP_FAILED,
    `cannot reach --url ${url} (${failure}): start the server (npx @bayou/server start) or pass the URL of a running one, e.g. --url http://127.0.0.1:8080/bayeux`,
  );
}

/**
 * Ends the process at SIGINT/SIGTERM (130/143): the clients keep reconnecting until a run
 * ends, so nothing else would stop it promptly. Returns the call that removes the handlers.
 */
export function exitOnSignal(name: string): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`${name}: stopped by ${signal}\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
