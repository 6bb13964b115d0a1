import { describe, expect, it } from 'vitest';
import { keySlot } from './redis-slots.js';

describe('keySlot', () => {
  it('gives the slots Redis gives', () => {
    // From the Redis Cluster specification (CRC16 of "123456789" is 0x31C3) and CLUSTER KEYSLOT.
    expect(keySlot('123456789')).toBe(0x31c3);
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('bar')).toBe(5061);
    expect(keySlot('')).toBe(0);
  });

  it('hashes the hash tag only, when there is a non-empty one', () => {
    expect(keySlot('bayou:{/a/b}:meta')).toBe(keySlot('/a/b'));
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    // An empty tag counts for nothing: the whole key is hashed (values from CLUSTER KEYSLOT).
    expect(keySlot('foo{}{bar}')).toBe(8363);
    expect(keySlot('bayou:{/a/b}:meta')).toBe(5575);
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
  });
});
