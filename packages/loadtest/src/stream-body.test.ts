import { describe, expect, it } from 'vitest';
import { NdjsonReader, SseReader } from './stream-body.js';

function collect(reader: NdjsonReader<null> | SseReader<null>, pieces: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of pieces) reader.push(null, p, (_, text) => out.push(text));
  return out;
}

describe('NdjsonReader', () => {
  it('yields each frame line once, across any cut, and skips padding and heartbeats', () => {
    const body = `${' '.repeat(2048)}\n[{"channel":"/meta/connect","successful":true}]\n\n[{"channel":"/a","data":{"i":1}}]\n\n`;
    const whole = collect(new NdjsonReader(), [body]);
    expect(whole).toEqual([
      '[{"channel":"/meta/connect","successful":true}]',
      '[{"channel":"/a","data":{"i":1}}]',
    ]);
    // Every two-piece cut gives the same frames.
    for (let cut = 1; cut < body.length; cut += 97) {
      expect(collect(new NdjsonReader(), [body.slice(0, cut), body.slice(cut)])).toEqual(whole);
    }
  });

  it('holds a line until its newline arrives and forgets it on reset', () => {
    const reader = new NdjsonReader<null>();
    expect(collect(reader, ['[1,', '2]'])).toEqual([]);
    reader.reset();
    expect(collect(reader, ['[3]\n'])).toEqual(['[3]']);
  });
});

describe('SseReader', () => {
  it("reads Faye's events: CRLF lines, comments, the retry field", () => {
    const reader = new SseReader<null>();
    const body =
      'retry: 5000\r\n\r\ndata: [{"channel":"/a","data":{"i":1}}]\r\n\r\n:\r\n\r\ndata: [2]\r\n\r\n';
    const out: string[] = [];
    for (let i = 0; i < body.length; i += 7) reader.push(null, body.slice(i, i + 7), (_, t) => out.push(t));
    expect(out).toEqual(['[{"channel":"/a","data":{"i":1}}]', '[2]']);
    expect(reader.retry).toBe(5000);
  });

  it('joins multi-line data with newlines and drops an event without data', () => {
    expect(collect(new SseReader(), ['event: x\n\ndata:[1,\ndata: 2]\n\n'])).toEqual(['[1,\n2]']);
  });
});
