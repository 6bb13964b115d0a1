import { describe, expect, it } from 'vitest';
import * as ws from 'ws';
import { textFrame } from './ws-fast-path.js';

interface FrameOptions {
  fin: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
  rsv1: boolean;
}
// `ws` exports its Sender at runtime; its type declarations do not name it.
const { Sender } = ws as unknown as { Sender: { frame(data: Buffer, options: FrameOptions): Buffer[] } };

/** What `ws` itself writes for an unmasked final text frame: header and payload. */
function wsFrame(payload: Buffer): Buffer {
  const parts = Sender.frame(payload, { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false });
  return Buffer.concat(parts);
}

describe('textFrame', () => {
  // The header has three forms: 7-bit, 16-bit and 64-bit lengths; test each edge.
  for (const length of [0, 1, 125, 126, 127, 65535, 65536, 70000]) {
    it(`frames a ${length}-byte payload exactly as ws does`, () => {
      const payload = Buffer.alloc(length, 'a');
      if (length > 0) payload[length - 1] = 0x7a;
      expect(textFrame(payload).equals(wsFrame(payload))).toBe(true);
      // The same payload handed over as text is encoded straight into the frame.
      expect(textFrame(payload.toString('utf8')).equals(wsFrame(payload))).toBe(true);
    });
  }

  it('encodes text with multi-byte characters, its length counted in bytes', () => {
    const text = `[${JSON.stringify({ channel: '/ch', data: 'é→🙂'.repeat(40) })}]`;
    const payload = Buffer.from(text, 'utf8');
    expect(payload.length).toBeGreaterThan(text.length);
    expect(textFrame(text).equals(wsFrame(payload))).toBe(true);
  });
});
