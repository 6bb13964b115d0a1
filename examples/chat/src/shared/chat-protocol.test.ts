import { describe, expect, it } from 'vitest';
import {
  checkText,
  LIMITS,
  nameProblem,
  normalizeName,
  normalizeRoom,
  roomOf,
  roomProblem,
} from './chat-protocol.js';

describe('chat limits', () => {
  it('accepts names up to the limit, counted in characters, trimmed and with spaces collapsed', () => {
    expect(normalizeName('  Ada   Lovelace ')).toBe('Ada Lovelace');
    expect(normalizeName('é'.repeat(LIMITS.nameLength))).toBe('é'.repeat(LIMITS.nameLength));
    expect(normalizeName('🙂'.repeat(LIMITS.nameLength))).not.toBeNull();
    expect(normalizeName('x'.repeat(LIMITS.nameLength + 1))).toBeNull();
    expect(normalizeName('')).toBeNull();
    expect(normalizeName('a\u202eb')).toBeNull();
    expect(normalizeName({ toString: () => 'x' })).toBeNull();
  });

  it('takes room names of lowercase letters, digits, - and _ only', () => {
    expect(normalizeRoom('Lobby')).toBe('lobby');
    expect(normalizeRoom('dev-ops_2')).toBe('dev-ops_2');
    for (const bad of ['', '-x', 'a b', 'a/b', '*', 'x'.repeat(LIMITS.roomLength + 1), null]) {
      expect(normalizeRoom(bad)).toBeNull();
    }
    expect(roomOf('/chat/lobby')).toBe('lobby');
    expect(roomOf('/chat/*')).toBeNull();
    expect(roomOf('/chat/Lobby')).toBeNull();
    expect(roomOf('/chat/a/b')).toBeNull();
  });

  it('trims messages, blanks control characters and enforces the length', () => {
    expect(checkText('  hi\u0007there ')).toEqual({ ok: true, text: 'hi there' });
    expect(checkText('x'.repeat(LIMITS.textLength))).toMatchObject({ ok: true });
    expect(checkText('x'.repeat(LIMITS.textLength + 1))).toEqual({ ok: false, reason: 'text_too_long' });
    expect(checkText(' \n ')).toEqual({ ok: false, reason: 'text_missing' });
    expect(checkText(7)).toEqual({ ok: false, reason: 'text_missing' });
  });

  it('says why a name or a room is refused, and nothing for a good one (one check per reason)', () => {
    expect(nameProblem('ada')).toBeNull();
    expect(nameProblem('  ')).toBe('a name is needed');
    expect(nameProblem('bell\u0007')).toMatch(/control/);
    expect(nameProblem('a\u202eb')).toMatch(/text-direction/);
    expect(nameProblem('x'.repeat(LIMITS.nameLength + 1))).toBe(`at most ${LIMITS.nameLength} characters`);
    for (const bad of ['bell\u0007', 'x'.repeat(25), ' ']) expect(normalizeName(bad)).toBeNull();
    expect(roomProblem('lobby')).toBeNull();
    expect(roomProblem('')).toBe('a room name is needed');
    expect(roomProblem('No Spaces!')).toMatch(/a-z, 0-9/);
    expect(roomProblem('r'.repeat(25))).toMatch(/at most 24/);
  });
});
