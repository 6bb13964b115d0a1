import { describe, expect, it } from 'vitest';
import { BayouClient } from './client.js';

describe('sharedConnection', () => {
  it('without the shared build, throws and names the import that has it', () => {
    expect(() => new BayouClient('http://127.0.0.1:1/bayeux', { sharedConnection: true })).toThrow(
      /needs @bayou\/client\/shared \(bayou-shared.min.js\)/,
    );
    // Off (the default) needs nothing.
    expect(new BayouClient('http://127.0.0.1:1/bayeux', { sharedConnection: false }).state).toBe(
      'disconnected',
    );
  });

  it('refuses a value that is neither a boolean nor a non-empty string', () => {
    expect(() => new BayouClient('http://127.0.0.1:1/bayeux', { sharedConnection: '' })).toThrow(
      /"sharedConnection" must be a boolean or a non-empty string/,
    );
    expect(
      () => new BayouClient('http://127.0.0.1:1/bayeux', { sharedConnection: 1 as unknown as boolean }),
    ).toThrow(/sharedConnection/);
  });

  it('with the shared build but no Web Locks (Node), the client keeps a connection of its own', async () => {
    expect((globalThis as { navigator?: { locks?: unknown } }).navigator?.locks).toBeUndefined();
    const shared = await import('./shared.js');
    const client = new shared.BayouClient('http://127.0.0.1:1/bayeux', { sharedConnection: 'user-1' });
    expect(client).toBeInstanceOf(BayouClient);
    expect(client).not.toBeInstanceOf(shared.SharedTab);
  });
});
