/**
 * The kernel stays a small batch-path object, not a service locator: fewer than 20 public
 * members, all of them given at construction (the instance is frozen, so a slot written
 * from outside afterwards fails at once), none of the removed late-bound slots, and no
 * method that only forwards to another part (those parts are its fields: `sessions`,
 * `channels`, `guards`, `publisher`, `services`).
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
  'sessions',
  'channels',
  'guards',
  'publisher',
  'services',
  'handleBatch',
  'sessionFor',
  'reply',
  'createSession',
  'incoming',
] as const;

describe('Kernel', () => {
  const node = createNode(resolveOptions({}), Fastify({ logger: false }).log, new MemoryEngine());
  const kernel = node.kernel;

  it('has fewer than 20 public members, exactly the listed ones', () => {
    expectTypeOf<keyof Kernel>().toEqualTypeOf<(typeof PUBLIC)[number]>();
    const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(kernel)).filter(
      (n) => n !== 'constructor',
    );
    const fields = Object.keys(kernel);
    // Counted on the instance, not on the list above: a member added to both still counts.
    expect(fields.length + methods.length).toBeLessThan(20);
    expect([...fields, ...methods].sort()).toEqual([...PUBLIC].sort());
  });

  it('takes no field written after its constructor: the instance is frozen', () => {
    expect(Object.isFrozen(kernel)).toBe(true);
    expect(() => {
      (kernel as unknown as Record<string, unknown>).forwardHandler = () => undefined;
    }).toThrow(TypeError);
    for (const slot of ['forwardHandler', 'onServiceTime', 'consoleGate', 'nodeStats', 'countPublish', 'p'])
      expect(slot in kernel).toBe(false);
    // The methods that only forwarded to another part are gone: callers reach that part.
    for (const forwarder of [
      'findSession',
      'removeSession',
      'subscribe',
      'unsubscribe',
      'publish',
      'emitSafe',
    ])
      expect(forwarder in kernel).toBe(false);
  });

  it('hands the facade to services as the app it was built with', () => {
    expect(kernel.app).toBe(node.app);
  });
});
