import type { StreamPosition } from '@bayou/protocol';
import { describe, expect, it } from 'vitest';
import { belowFloor } from './replay-extension.js';

const at = (offset: number, epoch = 'e1'): StreamPosition => ({ offset, epoch });

describe('the floor a recovered channel keeps', () => {
  it('drops live copies at or before the recovered position, and lifts at the first one after it', () => {
    const floors = new Map([['/a', at(5)]]);
    expect(belowFloor(floors, '/a', at(4))).toBe(true);
    expect(belowFloor(floors, '/a', at(5))).toBe(true);
    expect(floors.size).toBe(1);
    expect(belowFloor(floors, '/a', at(6))).toBe(false);
    expect(floors.size).toBe(0);
    // Lifted: nothing is dropped on the channel any more.
    expect(belowFloor(floors, '/a', at(3))).toBe(false);
  });

  it('lifts on a message of another epoch (the channel history was dropped and began again)', () => {
    const floors = new Map([['/a', at(5)]]);
    expect(belowFloor(floors, '/a', at(1, 'e2'))).toBe(false);
    expect(floors.size).toBe(0);
  });

  it('leaves other channels alone', () => {
    const floors = new Map([['/a', at(5)]]);
    expect(belowFloor(floors, '/b', at(1))).toBe(false);
    expect(floors.get('/a')).toEqual(at(5));
  });
});
