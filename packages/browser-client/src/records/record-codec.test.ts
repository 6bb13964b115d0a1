import { describe, expect, it } from 'vitest';
import { RecordCodec } from './record-codec.js';

describe('RecordCodec', () => {
  it('forgets aliases with each new handshake', () => {
    const codec = new RecordCodec();
    codec.outgoing({ channel: '/meta/handshake', ext: { token: 't' } });
    codec.incoming({ channel: '/~r', data: [0, { 0: 1 }, 's', { 0: 'bid' }, '/fx/A'] });
    codec.outgoing({ channel: '/meta/handshake' });
    expect(codec.incoming({ channel: '/~r', data: [0, { 0: 2 }, 'd'] })).toBeNull();
  });

  it('decodes compact snapshots and deltas into ordinary record messages', () => {
    const codec = new RecordCodec();
    expect(
      codec.incoming({ channel: '/~r', data: [3, { 0: 1.1, 1: 1.2 }, 's', { 0: 'bid', 1: 'ask' }, '/fx/A'] }),
    ).toEqual({
      channel: '/fx/A',
      data: { bid: 1.1, ask: 1.2 },
      ext: { r: 's' },
    });
    expect(codec.incoming({ channel: '/~r', data: [3, { 1: 1.3, 2: 9 }, 'd', { 2: 'volume' }] })).toEqual({
      channel: '/fx/A',
      data: { ask: 1.3, volume: 9 },
      ext: { r: 'd' },
    });
  });

  it('adds a subscription request to the subscribe message of its subject only', () => {
    const codec = new RecordCodec();
    codec.requests.set('/fx/A', { fields: ['bid'], maxFrequency: 2 });
    expect(codec.outgoing({ channel: '/meta/subscribe', subscription: '/fx/A' })?.ext).toEqual({
      record: { fields: ['bid'], maxFrequency: 2 },
    });
    expect(codec.outgoing({ channel: '/meta/subscribe', subscription: '/chat/x' })?.ext).toBeUndefined();
    const plain = { channel: '/chat/x', data: 1 };
    expect(codec.incoming(plain)).toBe(plain);
  });
});
