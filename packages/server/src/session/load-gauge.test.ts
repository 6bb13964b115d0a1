import { describe, expect, it } from 'vitest';
import { LoadGauge } from './load-gauge.js';

const spin = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
};
// Idle time is the gauge's input, so these waits are the stimulus, not a wait for an event.
const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LoadGauge', () => {
  it('reads a loop busy all the window as saturated and an idle one as not', async () => {
    const gauge = new LoadGauge(0.9, 50);
    gauge.busy();
    spin(120);
    expect(gauge.busy()).toBe(true);
    await idle(120); // timed on purpose: the gauge reads idle time
    expect(gauge.busy()).toBe(false);
  });

  it('keeps its reading for the window instead of reading again on every call', async () => {
    const gauge = new LoadGauge(0.9, 10_000);
    await idle(20); // timed on purpose: the gauge reads idle time
    expect(gauge.busy()).toBe(false);
    spin(60);
    // Within the window: the earlier reading stands.
    expect(gauge.busy()).toBe(false);
  });
});
