import { describe, expect, it } from 'vitest';
import { decodePublication } from './redis-broker.js';
import { newEpoch } from './redis-history.js';

describe('decodePublication', () => {
  it('reads a publication with its position, keeping newlines of the payload', () => {
    expect(decodePublication('n1.7\n\n/a/b\n12\nEp0ch\n{"x":"1\\n2"}\nmore')).toEqual({
      id: 'n1.7',
      publication: {
        channel: '/a/b',
        payload: '{"x":"1\\n2"}\nmore',
        position: { offset: 12, epoch: 'Ep0ch' },
      },
    });
  });

  it('reads a record update without a position', () => {
    expect(decodePublication('n1.8\nr\n/fx/EURUSD\n\n\n{"bid":1}')).toEqual({
      id: 'n1.8',
      publication: { channel: '/fx/EURUSD', payload: '{"bid":1}', position: null, record: true },
    });
  });

  it('refuses what is not a publication', () => {
    expect(decodePublication('garbage')).toBeNull();
    expect(decodePublication('a\nb\nc\nd')).toBeNull();
  });
});

describe('newEpoch', () => {
  it('never repeats within a process and stays one line of URL-safe characters', () => {
    const epochs = Array.from({ length: 10_000 }, () => newEpoch());
    expect(new Set(epochs).size).toBe(epochs.length);
    for (const e of epochs) expect(e).toMatch(/^[A-Za-z0-9_-]{9,}$/);
  });

  it('shares its random part within a process, so a fresh epoch costs no random draw', () => {
    const [a, b] = [newEpoch(), newEpoch()];
    expect(a.slice(0, 8)).toBe(b.slice(0, 8));
  });
});
