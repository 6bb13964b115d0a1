/**
 * Preload for a storm run (`NODE_OPTIONS="--require …/loop-delay.cjs" LOOP_DELAY_DIR=<dir>`):
 * every Node process of the run (the chaos parent, its client workers, the balancer, each
 * `bayou start` node) writes, each second, to `<dir>/<pid>.log`: the time (ms), the ms since
 * its last line, its event-loop delay (longest, p99, mean, ms), its CPU (ms) and its main
 * thread's time on a CPU and waiting in the run queue (ms, `/proc/thread-self/schedstat`).
 * The first line names the process. Without LOOP_DELAY_DIR it does nothing.
 */
const { monitorEventLoopDelay } = require('node:perf_hooks');
const fs = require('node:fs');
const path = require('node:path');

const dir = process.env.LOOP_DELAY_DIR;
if (dir) {
  let role = path.basename(process.argv[1] || 'node');
  if (require('node:cluster').isWorker) role += ':worker';
  const port = process.argv.indexOf('--port');
  if (port > 0) role += `:${process.argv[port + 1]}`;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const sched = () => {
    try {
      return fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    } catch {
      return [0, 0];
    }
  };
  let cpu = process.cpuUsage();
  let ran = sched();
  let last = Date.now();
  const file = path.join(dir, `${process.pid}.log`);
  fs.appendFileSync(file, `# ${role} ${process.argv.slice(1).join(' ')}\n`);
  setInterval(() => {
    const now = Date.now();
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const next = sched();
    const ms = (ns) => (ns / 1e6).toFixed(0);
    const line = [
      now,
      now - last,
      ms(loop.max),
      ms(loop.percentile(99)),
      (loop.mean / 1e6).toFixed(1),
      ((used.user + used.system) / 1000).toFixed(0),
      ms(next[0] - ran[0]),
      ms(next[1] - ran[1]),
    ];
    ran = next;
    last = now;
    loop.reset();
    fs.appendFileSync(file, `${line.join(' ')}\n`);
  }, 1000).unref();
}
