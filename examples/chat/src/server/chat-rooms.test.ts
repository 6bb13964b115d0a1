import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../shared/chat-protocol.js';
import { ChatRooms } from './chat-rooms.js';

const message = (room: string, n: number): ChatMessage => ({
  type: 'message',
  id: String(n),
  room,
  user: 'u',
  text: `m${n}`,
  ts: n,
});

describe('ChatRooms', () => {
  it('keeps only the newest messages of a room, oldest first', () => {
    const rooms = new ChatRooms({ historySize: 3 });
    for (let n = 1; n <= 5; n++) rooms.record(message('a', n));
    expect(rooms.history('a').map((m) => m.text)).toEqual(['m3', 'm4', 'm5']);
    expect(rooms.history('b')).toEqual([]);
  });

  it('counts a user once however many sessions they join with, and lets them go with the last', () => {
    const rooms = new ChatRooms();
    expect(rooms.join('a', 'bob')).toBe(true);
    expect(rooms.join('a', 'bob')).toBe(false);
    expect(rooms.join('a', 'alice')).toBe(true);
    expect(rooms.members('a')).toEqual(['alice', 'bob']);
    expect(rooms.leave('a', 'bob')).toBe(false);
    expect(rooms.members('a')).toEqual(['alice', 'bob']);
    expect(rooms.leave('a', 'bob')).toBe(true);
    expect(rooms.leave('a', 'bob')).toBe(false);
    expect(rooms.members('a')).toEqual(['alice']);
  });

  it('forgets the oldest empty rooms past its bound, never one with members', () => {
    const rooms = new ChatRooms({ maxRooms: 2 });
    rooms.join('busy', 'alice');
    rooms.record(message('quiet', 1));
    rooms.record(message('new', 2));
    expect(rooms.size).toBe(2);
    expect(rooms.members('busy')).toEqual(['alice']);
    expect(rooms.history('quiet')).toEqual([]);
    expect(rooms.history('new')).toHaveLength(1);
  });
});
