/**
 * The kernel stays a small batch-path object, not a service locator: fewer than 25 public
 * members, all of them given at construction (the instance is frozen, so a slot written
 * from outside afterwards fails at once), and none of the removed late-bound slots.
 */
import Fastify from 'fastify';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { MemoryEngine } from '../src/engine/memory/memory-engine.js';
import { createNode } from '../src/kernel/create-node.js';
import type { Kernel } from '../src/kernel/kernel.js';
import { resolveOptions } from '../src/options.js';

/** The kernel's whole public surface; the type test below fails when it changes. */
const PUBLIC = [
  'options',
  'log',
  'stats',
  'app',
  'taps',
  'cluster',
  'connects',
  'outbound',
  'handleBatch',
  'sessionFor',
  'reply',
  'findSession',
  'createSession',
  'removeSession',
  'incoming',
  'emitSafe',
  'engineCall',
  'subscribe',
  'unsubscribe',
  'subscribed',
  'isRecordSubject',
  'publish',
  'serviceFor',
] as const;

describe('Kernel', () => {
  const node = createNode(resolveOptions({}), Fastify({ logger: false }).log, new MemoryEngine());
  const kernel = node.kernel;

  it('has fewer than 25 public members, exactly the listed ones', () => {
    expectTypeOf<keyof Kernel>().toEqualTypeOf<(typeof PUBLIC)[number]>();
    const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(kernel)).filter(
      (n) => n !== 'constructor',
    );
    const fields = Object.keys(kernel).filter((n) => n !== 'p');
    // Counted on the instance, not on the list above: a member added to both still counts.
    expect(fields.length + methods.length).toBeLessThan(25);
    expect([...fields, ...methods].sort()).toEqual([...PUBLIC].sort());
  });

  it('takes no field written after its constructor: the instance is frozen', () => {
    expect(Object.isFrozen(kernel)).toBe(true);
    expect(() => {
      (kernel as unknown as Record<string, unknown>).forwardHandler = () => undefined;
    }).toThrow(TypeError);
    for (const slot of ['forwardHandler', 'onServiceTime', 'consoleGate', 'nodeStats', 'countPublish'])
      expect(slot in kernel).toBe(false);
  });

  it('hands the facade to services as the app it was built with', () => {
    expect(kernel.app).toBe(node.app);
  });
});
