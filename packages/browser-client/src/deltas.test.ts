import { DELTA_FORMAT, EXT_DELTA } from '@bayou/protocol';
import { describe, expect, it } from 'vitest';
import { applyMergePatch, Deltas } from './deltas.js';
import type { Message } from './types.js';

const whole = (id: string, data: unknown): Message => ({ channel: '/p', data, ext: { [EXT_DELTA]: { id } } });
const delta = (id: string, from: string, data: unknown): Message => ({
  channel: '/p',
  data,
  ext: { [EXT_DELTA]: { id, from } },
});

function deltas() {
  const resyncs: string[] = [];
  const d = new Deltas((channel) => resyncs.push(channel));
  d.last.set('/p', null);
  return { d, resyncs };
}

describe('Deltas', () => {
  it('asks for deltas on the subscribe of a channel that wants them, and on no other', () => {
    const { d } = deltas();
    expect(d.outgoing({ channel: '/meta/subscribe', subscription: '/p' }).ext).toEqual({
      [EXT_DELTA]: DELTA_FORMAT,
    });
    expect(d.outgoing({ channel: '/meta/subscribe', subscription: '/q' }).ext).toBeUndefined();
  });

  it('applies each delta to the message it names, handing on whole messages', () => {
    const { d } = deltas();
    expect(d.incoming(whole('e:1', { a: 1, b: 2 }))?.data).toEqual({ a: 1, b: 2 });
    expect(d.incoming(delta('e:2', 'e:1', { b: 3 }))?.data).toEqual({ a: 1, b: 3 });
    expect(d.incoming(delta('e:3', 'e:2', { a: null, c: [1] }))?.data).toEqual({ b: 3, c: [1] });
  });

  it('never applies a delta to another base: it is dropped, the channel subscribed again, and the next whole message taken', () => {
    const { d, resyncs } = deltas();
    d.incoming(whole('e:1', { a: 1, b: 2 }));
    // e:2 was lost: a delta from it must not be applied to e:1.
    expect(d.incoming(delta('e:3', 'e:2', { b: 9 }))).toBeNull();
    expect(resyncs).toEqual(['/p']);
    // Nor to anything after the drop, until a whole message.
    expect(d.incoming(delta('e:4', 'e:3', { b: 10 }))).toBeNull();
    expect(d.incoming(whole('e:5', { a: 5, b: 5 }))?.data).toEqual({ a: 5, b: 5 });
    expect(d.incoming(delta('e:6', 'e:5', { b: 6 }))?.data).toEqual({ a: 5, b: 6 });
  });

  it('takes an unnamed message as no base, and a new handshake or subscribe as a fresh start', () => {
    const { d, resyncs } = deltas();
    d.incoming(whole('e:1', { a: 1 }));
    d.incoming({ channel: '/p', data: { a: 2 } });
    expect(d.incoming(delta('e:2', 'e:1', { a: 3 }))).toBeNull();
    d.incoming(whole('e:3', { a: 3 }));
    d.outgoing({ channel: '/meta/handshake' });
    expect(d.incoming(delta('e:4', 'e:3', { a: 4 }))).toBeNull();
    expect(resyncs).toHaveLength(2);
  });

  it('leaves replies and other channels alone', () => {
    const { d } = deltas();
    const other = delta('e:2', 'e:1', { b: 1 });
    expect(d.incoming({ ...other, channel: '/q' })).toEqual({ ...other, channel: '/q' });
    expect(d.incoming({ channel: '/p', successful: true })).toEqual({ channel: '/p', successful: true });
  });
});

describe('applyMergePatch', () => {
  it('follows RFC 7386', () => {
    expect(applyMergePatch({ a: 'b', c: { d: 'e', f: 'g' } }, { a: 'z', c: { f: null } })).toEqual({
      a: 'z',
      c: { d: 'e' },
    });
    expect(applyMergePatch({ a: [1, 2] }, { a: [3] })).toEqual({ a: [3] });
    expect(applyMergePatch('x', { a: 1 })).toEqual({ a: 1 });
  });
});
