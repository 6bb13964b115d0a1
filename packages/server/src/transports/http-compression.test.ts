import { constants, gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptsGzip, GzipFrames } from './http-compression.js';

describe('acceptsGzip', () => {
  it.each([
    ['gzip, deflate, br, zstd', true],
    ['deflate, gzip;q=0.5', true],
    ['*', true],
    ['GZIP', true],
    ['gzip;q=0', false],
    ['identity', false],
    ['br', false],
    ['', false],
    [undefined, false],
  ])('%j → %s', (header, accepted) => {
    expect(acceptsGzip(header)).toBe(accepted);
  });
});

describe('GzipFrames', () => {
  it('makes one gzip body of frames deflated or stored, each decodable as soon as it is written', () => {
    const gzip = new GzipFrames(100);
    const frames = [
      'x'.repeat(2048),
      '[{"small":1}]\n',
      Buffer.from('y'.repeat(70_000)),
      'z'.repeat(150_000),
    ];
    const pieces = frames.map((f) => gzip.frame(f));
    // Everything written so far inflates without the end: the frames were flushed.
    const soFar = inflateRawSync(Buffer.concat(pieces).subarray(10), { finishFlush: constants.Z_SYNC_FLUSH });
    expect(soFar.toString()).toBe(frames.join(''));
    // Under the threshold a frame is stored: its bytes and 5 more.
    expect(pieces[1]?.length).toBe(Buffer.byteLength(frames[1] as string) + 5);
    const body = Buffer.concat([...pieces, gzip.close()]);
    expect(gunzipSync(body).toString()).toBe(frames.join(''));
  });

  it('stores a frame of over 64 KiB under the threshold in several blocks', () => {
    const gzip = new GzipFrames(1_000_000);
    const frame = 'q'.repeat(140_000);
    const body = Buffer.concat([gzip.frame(frame), gzip.close()]);
    expect(gunzipSync(body).toString()).toBe(frame);
  });

  it('ends a body with no frame as a valid empty gzip', () => {
    expect(gunzipSync(new GzipFrames(10).close()).length).toBe(0);
  });
});
