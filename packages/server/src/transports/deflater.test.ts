import { constants, createDeflateRaw, deflateRawSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { RawDeflater } from './deflater.js';

const OPTIONS = { level: 1, memLevel: 4, windowBits: 11 };
const message = (i: number) =>
  JSON.stringify({ channel: `/grid/${i}`, data: { bid: 100 + i, ask: 100.5 + i, text: 'x'.repeat(i % 50) } });

describe('RawDeflater', () => {
  it("uses Node's zlib internals as they are (else everything goes through deflateRawSync)", () => {
    const stream = createDeflateRaw(OPTIONS) as unknown as {
      _handle: { reset: unknown; writeSync: unknown };
      _writeState: unknown;
      close(): void;
    };
    expect(typeof stream._handle.reset).toBe('function');
    expect(typeof stream._handle.writeSync).toBe('function');
    expect(stream._writeState).toBeInstanceOf(Uint32Array);
    stream.close();
  });

  it('compresses each payload on its own, byte for byte as deflateRawSync, with either flush', () => {
    const deflater = new RawDeflater(OPTIONS);
    const payloads = [
      Buffer.alloc(0),
      Buffer.from('['.concat(message(1), ']')),
      Buffer.from(`[${Array.from({ length: 40 }, (_, i) => message(i)).join(',')}]`),
      // Incompressible and larger than the first output buffer: the buffer grows.
      Buffer.from(Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 251)),
      Buffer.from('['.concat(message(2), ']')),
    ];
    for (const flush of [constants.Z_SYNC_FLUSH, constants.Z_FINISH]) {
      for (const payload of payloads) {
        const out = deflater.deflate(payload, flush);
        expect(out.equals(deflateRawSync(payload, { ...OPTIONS, finishFlush: flush }))).toBe(true);
        expect(inflateRawSync(out, { finishFlush: constants.Z_SYNC_FLUSH }).equals(payload)).toBe(true);
      }
    }
  });

  it('hands out results that later calls do not overwrite', () => {
    const deflater = new RawDeflater(OPTIONS);
    const first = deflater.deflate(Buffer.from(message(3)));
    const copy = Buffer.from(first);
    deflater.deflate(Buffer.from(message(4)));
    expect(first.equals(copy)).toBe(true);
  });

  it('compresses a payload past what it keeps a buffer for through deflateRawSync', () => {
    const deflater = new RawDeflater(OPTIONS);
    const big = Buffer.from('abc'.repeat(500_000));
    const out = deflater.deflate(big);
    expect(out.equals(deflateRawSync(big, { ...OPTIONS, finishFlush: constants.Z_SYNC_FLUSH }))).toBe(true);
  });
});
