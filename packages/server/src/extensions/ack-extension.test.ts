import { describe, expect, it } from 'vitest';
import { AckState, reportedAck } from './ack-extension.js';

describe('AckState', () => {
  it('numbers batches and resends, in order, every batch after the acknowledged one', () => {
    const ack = new AckState(false);
    expect(ack.next(['a', 'b'])).toBe(1);
    expect(ack.next([])).toBe(2);
    expect(ack.next(['c'])).toBe(3);
    expect(ack.pending).toBe(3);
    expect(ack.acknowledge(1)).toEqual(['c']);
    expect(ack.pending).toBe(0);
  });

  it('forgets everything acknowledged, and keeps its own copy of each batch', () => {
    const ack = new AckState(false);
    const messages = ['a'];
    ack.next(messages);
    messages.push('the connect reply');
    expect(ack.acknowledge(0)).toEqual(['a']);
    ack.next(['b']);
    expect(ack.acknowledge(5)).toEqual([]);
    expect(ack.acknowledge(5)).toEqual([]);
  });

  it('forgets the batches a client reports received over a live socket, resending none', () => {
    const ack = new AckState(false);
    ack.next(['a']);
    ack.next(['b', 'c']);
    ack.next(['d']);
    ack.forget(2);
    expect(ack.pending).toBe(1);
    ack.forget(2);
    expect(ack.pending).toBe(1);
    // After a reconnect, only what followed the last report comes back.
    expect(ack.acknowledge(2)).toEqual(['d']);
    expect(ack.pending).toBe(0);
  });

  it('reads only an integer ack from a connect ext', () => {
    expect(reportedAck({ ack: 3 })).toBe(3);
    expect(reportedAck({ ack: '3' })).toBeUndefined();
    expect(reportedAck({ ack: 1.5 })).toBeUndefined();
    expect(reportedAck(undefined)).toBeUndefined();
    expect(reportedAck({ ack: 3, ackFrames: 4 }, 'ackFrames')).toBe(4);
  });
});
