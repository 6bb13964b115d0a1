/**
 * One raw DEFLATE compressor per process, reset for each payload, for everything the
 * server compresses (a WebSocket frame, a stream's gzip segment, a long-polling reply).
 * `deflateRawSync` builds a zlib stream per call (a `Transform` in JavaScript, `deflateInit`
 * and `deflateEnd` in zlib) and closes it: about half of its cost on a payload of a few
 * hundred bytes, what the server compresses most (a frame of two or three messages). Here
 * the zlib stream is made once and reset (`deflateReset`) per payload, through the calls
 * Node's own `processChunkSync` makes (`_handle.writeSync`, `_writeState`);
 * `deflater.test.ts` checks those internals and that the output is `deflateRawSync`'s,
 * byte for byte. Should a Node release change them, every payload goes through
 * `deflateRawSync` instead. No state outlives a call: each payload is compressed on its
 * own, as `server_no_context_takeover` (and a gzip segment) requires.
 */
import { constants, createDeflateRaw, type DeflateRaw, deflateRawSync, type ZlibOptions } from 'node:zlib';

/** The fields of Node's zlib stream (lib/zlib.js) used here. */
interface ZlibInternals {
  _handle: {
    reset(): void;
    writeSync(
      flush: number,
      input: Buffer,
      inOffset: number,
      inLength: number,
      out: Buffer,
      outOffset: number,
      outLength: number,
    ): void;
  } | null;
  /** After a write: [output bytes left, input bytes left]. */
  _writeState: Uint32Array;
}

/** Payloads past this go through `deflateRawSync` (the output buffer is kept this small). */
const MAX_KEPT_OUTPUT = 1 << 20;

export class RawDeflater {
  private engine: (DeflateRaw & ZlibInternals) | null = null;
  private out: Buffer = Buffer.allocUnsafe(16 * 1024);
  /** Whether Node's internals are as expected; `false` sends everything to `deflateRawSync`. */
  private usable = true;

  constructor(private readonly options: ZlibOptions) {}

  /**
   * `input` compressed on its own as raw DEFLATE, ending with `flush`: `Z_SYNC_FLUSH` (the
   * output ends in an empty stored block, `00 00 ff ff`, and more may follow it) or
   * `Z_FINISH` (a whole DEFLATE stream).
   */
  deflate(input: Buffer, flush: number = constants.Z_SYNC_FLUSH): Buffer {
    // zlib's bound for non-default parameters, and room for the flush's empty block.
    const bound = input.length + (input.length >> 3) + (input.length >> 6) + 32;
    const engine = bound <= MAX_KEPT_OUTPUT ? this.ready() : null;
    if (engine === null) return deflateRawSync(input, { ...this.options, finishFlush: flush });
    if (this.out.length < bound) this.out = Buffer.allocUnsafe(bound);
    const handle = engine._handle as NonNullable<ZlibInternals['_handle']>;
    handle.reset();
    handle.writeSync(flush, input, 0, input.length, this.out, 0, this.out.length);
    const [outLeft = 0, inLeft = 1] = engine._writeState;
    if (engine._handle === null || inLeft !== 0 || outLeft === 0) {
      // An error closed it, or the output did not fit: start afresh, the slow way.
      this.engine = null;
      return deflateRawSync(input, { ...this.options, finishFlush: flush });
    }
    const length = this.out.length - outLeft;
    const result = Buffer.allocUnsafe(length);
    this.out.copy(result, 0, 0, length);
    return result;
  }

  private ready(): (DeflateRaw & ZlibInternals) | null {
    if (this.engine !== null || !this.usable) return this.engine;
    const engine = createDeflateRaw(this.options) as DeflateRaw & ZlibInternals;
    // Errors are seen by the caller through `_handle`; the stream's own event is not needed.
    engine.on('error', () => undefined);
    const handle = engine._handle;
    if (
      typeof handle?.reset !== 'function' ||
      typeof handle.writeSync !== 'function' ||
      !(engine._writeState instanceof Uint32Array)
    ) {
      this.usable = false;
      engine.close();
      return null;
    }
    this.engine = engine;
    return engine;
  }
}
