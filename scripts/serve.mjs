// Runs a long-lived command (the demo servers of `npm start` and `npm run grid`) in a
// process group of its own and passes SIGINT, SIGTERM and SIGHUP on to the whole group, so
// stopping the wrapper stops the server too: a plain child of `spawnSync` (pnpm, then the
// server under it) kept running after `kill <wrapper pid>`, holding its port.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** Starts `cmd args` in `cwd`; the returned promise never settles: the wrapper exits with the command. */
export function serve(cmd, args, cwd) {
  const child = spawn(cmd, args, { cwd, stdio: 'inherit', detached: true });
  const pass = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone already
    }
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => pass(signal));
  // The wrapper's own end (an uncaught error, its parent gone) must not leave the group running.
  process.on('exit', () => pass('SIGTERM'));
  child.on('error', (err) => {
    console.error(`bayou: could not start ${cmd}: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
  return new Promise(() => {});
}
