/**
 * What the client's fake-timer suites share: a fresh in-process fake Bayeux server and fake
 * timers for each test, a client wired to that server, a recorder of state and transport
 * changes, and a way to move the clock.
 */
import { afterEach, beforeEach, vi } from 'vitest';
import { BayouClient, type BayouClientOptions, type ConnectionState } from '../src/index.js';
import { FakeBayeuxServer } from './fake-server.js';

export interface FakeClientHarness {
  /** The current test's server. */
  server(): FakeBayeuxServer;
  /** Gives the current test a fresh server; clients made after it use the new one. */
  renew(): FakeBayeuxServer;
  /** A client of the current test's server (probe delays shortened for the tests). */
  client(options?: BayouClientOptions): BayouClient;
}

/** Registers the per-test setup; call it at the top of a test file. */
export function useFakeServer(): FakeClientHarness {
  let server: FakeBayeuxServer | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
    server = new FakeBayeuxServer();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });
  const current = (): FakeBayeuxServer => {
    if (server === undefined) throw new Error('useFakeServer: no test is running');
    return server;
  };
  return {
    server: current,
    renew: () => {
      server = new FakeBayeuxServer();
      return server;
    },
    client: (options = {}) =>
      new BayouClient('http://bayou.test/bayeux', {
        WebSocket: current().WebSocket,
        fetch: current().fetch,
        minProbeDelay: 1000,
        maxProbeDelay: 8000,
        ...options,
      }),
  };
}

export function track(c: BayouClient): { states: ConnectionState[]; transports: string[] } {
  const states: ConnectionState[] = [];
  const transports: string[] = [];
  c.on('state', (s) => states.push(s));
  c.on('transport', (t) => transports.push(t));
  return { states, transports };
}

export const tick = (ms: number): Promise<typeof vi> => vi.advanceTimersByTimeAsync(ms);
