import { Counter, type Registry } from 'prom-client';

/** A counter that reports a running total kept elsewhere. */
export function totalCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let reported = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      if (now > reported) this.inc(now - reported);
      reported = now;
    },
  });
}
