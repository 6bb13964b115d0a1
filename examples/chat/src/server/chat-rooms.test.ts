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

  it('forgets the room written to least recently past its bound', () => {
    const rooms = new ChatRooms({ maxRooms: 2 });
    rooms.record(message('old', 1));
    rooms.record(message('quiet', 2));
    rooms.record(message('old', 3));
    rooms.record(message('new', 4));
    expect(rooms.size).toBe(2);
    expect(rooms.history('quiet')).toEqual([]);
    expect(rooms.history('old').map((m) => m.text)).toEqual(['m1', 'm3']);
    expect(rooms.history('new')).toHaveLength(1);
  });
});
