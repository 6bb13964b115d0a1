import { describe, expect, it } from 'vitest';
import { TransportSelector } from './transport-selector.js';
import { longPolling } from './transports/long-polling.js';
import { websocket } from './transports/websocket.js';

const names = (list: { name: string }[]) => list.map((f) => f.name);

describe('TransportSelector', () => {
  it('tries the configured transports in order until the server has spoken', () => {
    const s = new TransportSelector([websocket, longPolling]);
    expect(names(s.candidates())).toEqual(['websocket', 'long-polling']);
    expect(s.names).toEqual(['websocket', 'long-polling']);
  });

  it('keeps only what the server offers', () => {
    const s = new TransportSelector([websocket, longPolling]);
    s.serverOffers(['long-polling', 'callback-polling']);
    expect(names(s.candidates())).toEqual(['long-polling']);
    expect(s.better('long-polling')).toBeUndefined();
  });

  it('sets a demoted transport aside and names it as the one to probe, until promoted', () => {
    const s = new TransportSelector([websocket, longPolling]);
    s.demote(['websocket']);
    expect(names(s.candidates())).toEqual(['long-polling']);
    expect(s.better('long-polling')?.name).toBe('websocket');
    expect(s.better('websocket')).toBeUndefined();
    s.promote('websocket');
    expect(names(s.candidates())).toEqual(['websocket', 'long-polling']);
  });

  it('never leaves nothing to try', () => {
    const s = new TransportSelector([websocket, longPolling]);
    s.demote(['websocket', 'long-polling']);
    expect(names(s.candidates())).toEqual(['websocket', 'long-polling']);
    s.reset();
    expect(names(s.candidates())).toEqual(['websocket', 'long-polling']);
  });
});
