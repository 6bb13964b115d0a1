import { describe, expect, it } from 'vitest';
import { type ConnectionState, StateMachine } from './state.js';

describe('StateMachine', () => {
  it('emits the next and the previous state on every change', () => {
    const seen: string[] = [];
    const m = new StateMachine((next, prev) => seen.push(`${prev}->${next}`));
    m.set('connecting');
    m.set('connected');
    m.set('reconnecting');
    m.set('connected');
    m.set('disconnected');
    expect(seen).toEqual([
      'disconnected->connecting',
      'connecting->connected',
      'connected->reconnecting',
      'reconnecting->connected',
      'connected->disconnected',
    ]);
  });

  it('ignores a change to the current state', () => {
    let calls = 0;
    const m = new StateMachine(() => calls++);
    m.set('disconnected');
    expect(calls).toBe(0);
  });

  it.each<[ConnectionState, ConnectionState]>([
    ['disconnected', 'connected'],
    ['disconnected', 'reconnecting'],
    ['connecting', 'reconnecting'],
  ])('refuses %s -> %s', (from, to) => {
    const m = new StateMachine(() => {});
    if (from === 'connecting') m.set('connecting');
    expect(() => m.set(to)).toThrow(/invalid state transition/);
  });
});
