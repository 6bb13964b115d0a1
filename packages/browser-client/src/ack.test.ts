import { afterEach, describe, expect, it, vi } from 'vitest';
import { AckExtension, FRAME_REPORT_DELAY, REPORT_AFTER_MESSAGES } from './ack.js';

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

describe('AckExtension with numbered frames', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const framed = () => {
    let reports = 0;
    const ack = new AckExtension(true, true, () => {
      reports++;
    });
    const hs = ack.outgoing({ channel: '/meta/handshake', ext: { bayou: { records: true } } });
    expect(hs?.ext).toEqual({ ack: true, bayou: { records: true, ackFrames: true } });
    ack.incoming(handshake({ enabled: true, batch: 0, frames: true }));
    return { ack, reports: () => reports };
  };
  const marker = (n: number) => ({ channel: '/meta/ack', ext: { ack: n } });
  const delivery = { channel: '/chat/1', data: 'x' };
  const ws = (ext?: Record<string, unknown>) => ({
    channel: '/meta/connect',
    connectionType: 'websocket',
    ext,
  });

  it('swallows the markers, keeps the number, and reports it over WebSocket without asking for a resend', () => {
    const { ack } = framed();
    expect(ack.incoming(delivery)).toEqual(delivery);
    expect(ack.incoming(marker(4))).toBeNull();
    expect(ack.outgoing(ws())?.ext).toEqual({ ackFrames: 4 });
    // The first connect on a new link asks for what followed, as CometD's does.
    expect(ack.outgoing(ws({ ack: 'resume' }))?.ext).toEqual({ ack: 4 });
    // Over long-polling every connect acknowledges connect replies.
    expect(ack.outgoing({ channel: '/meta/connect', connectionType: 'long-polling' })?.ext).toEqual({
      ack: 4,
    });
  });

  it('asks for a report a second after a frame with deliveries, or at once after 1,000 deliveries, and not for empty frames', () => {
    vi.useFakeTimers();
    const { ack, reports } = framed();
    ack.incoming(marker(1)); // replies only: nothing to report
    vi.advanceTimersByTime(FRAME_REPORT_DELAY * 2);
    expect(reports()).toBe(0);
    ack.incoming(delivery);
    ack.incoming(marker(2));
    vi.advanceTimersByTime(FRAME_REPORT_DELAY - 1);
    expect(reports()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(reports()).toBe(1);
    ack.outgoing(ws()); // the report went out: nothing pending any more
    vi.advanceTimersByTime(FRAME_REPORT_DELAY * 2);
    expect(reports()).toBe(1);
    for (let n = 0; n < REPORT_AFTER_MESSAGES - 1; n++) ack.incoming(delivery);
    ack.incoming(marker(3));
    expect(reports()).toBe(1);
    ack.incoming(delivery);
    ack.incoming(marker(4));
    expect(reports()).toBe(2);
  });

  it('leaves no timer behind: a disconnect drops the pending report, and an unsent one is not retried on its own', () => {
    vi.useFakeTimers();
    const { ack, reports } = framed();
    ack.incoming(delivery);
    ack.incoming(marker(1));
    ack.outgoing({ channel: '/meta/disconnect' });
    expect(vi.getTimerCount()).toBe(0);
    ack.incoming(delivery);
    ack.incoming(marker(2));
    vi.advanceTimersByTime(FRAME_REPORT_DELAY); // onReport finds no connect to renew
    expect(reports()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('falls back to connect replies when the server does not offer numbered frames', () => {
    const ack = new AckExtension(true, true);
    ack.outgoing({ channel: '/meta/handshake' });
    ack.incoming(handshake({ enabled: true, batch: 0 }));
    ack.incoming({ channel: '/meta/connect', successful: true, ext: { ack: 2 } });
    expect(ack.outgoing(ws())?.ext).toEqual({ ack: 2 });
    expect(ack.incoming(marker(9))).toEqual(marker(9));
  });
});
