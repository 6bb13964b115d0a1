import { describe, expect, it } from 'vitest';
import { AckExtension } from './ack.js';

const handshake = (ack: unknown) => ({ channel: '/meta/handshake', successful: true, ext: { ack } });

describe('AckExtension', () => {
  it('asks in the handshake and reports the last batch received on every connect', () => {
    const ack = new AckExtension(true);
    expect(ack.outgoing({ channel: '/meta/handshake' })?.ext).toEqual({ ack: true });
    ack.incoming(handshake({ enabled: true, batch: 0 }));
    expect(ack.outgoing({ channel: '/meta/connect', id: '1' })?.ext).toEqual({ ack: 0 });
    ack.incoming({ channel: '/meta/connect', id: '1', successful: true, ext: { ack: 3 } });
    expect(ack.outgoing({ channel: '/meta/connect', id: '2' })?.ext).toEqual({ ack: 3 });
  });

  it('reports nothing on a superseding connect, and ignores the number in a probe reply', () => {
    const ack = new AckExtension(true);
    ack.outgoing({ channel: '/meta/handshake' });
    ack.incoming(handshake(true));
    expect(ack.outgoing({ channel: '/meta/connect', id: '1', ext: { ack: 'skip' } })?.ext).toBeUndefined();
    ack.incoming({ channel: '/meta/connect', id: '1', successful: true, ext: { ack: 2 } });
    expect(ack.outgoing({ channel: '/meta/connect', id: '2', ext: { ack: 'probe' } })?.ext).toBeUndefined();
    ack.incoming({ channel: '/meta/connect', id: '2', successful: true, ext: { ack: 5 } });
    expect(ack.outgoing({ channel: '/meta/connect', id: '3' })?.ext).toEqual({ ack: 2 });
  });

  it('stays out of the way when turned off or refused, and starts again at 0 with a new session', () => {
    const off = new AckExtension(false);
    expect(off.outgoing({ channel: '/meta/handshake' })?.ext).toBeUndefined();
    expect(off.outgoing({ channel: '/meta/connect', ext: { ack: 'probe' } })?.ext).toBeUndefined();
    const refused = new AckExtension(true);
    refused.outgoing({ channel: '/meta/handshake' });
    refused.incoming(handshake(undefined));
    expect(refused.outgoing({ channel: '/meta/connect' })?.ext).toBeUndefined();
    const again = new AckExtension(true);
    again.outgoing({ channel: '/meta/handshake' });
    again.incoming(handshake(true));
    again.incoming({ channel: '/meta/connect', successful: true, ext: { ack: 7 } });
    again.outgoing({ channel: '/meta/handshake' });
    again.incoming(handshake(true));
    expect(again.outgoing({ channel: '/meta/connect' })?.ext).toEqual({ ack: 0 });
  });
});
