/**
 * The connection state machine. Every change goes through `StateMachine.set`, which
 * refuses transitions the table does not allow and emits `(next, previous)`.
 *
 *   disconnected ──connect()──▶ connecting ──first /meta/connect ok──▶ connected
 *        ▲                          │  ▲                                  │
 *        │◀── stop (denied, none, disconnect()) ──────────────────────────┤
 *        │                                                  lost, 402     ▼
 *        └──────────────────────────────────────────────────────── reconnecting
 */
export type ConnectionState = 'disconnected' | 'connecting' | 'connected' | 'reconnecting';

const allowed: Record<ConnectionState, readonly ConnectionState[]> = {
  disconnected: ['connecting'],
  connecting: ['connected', 'disconnected'],
  connected: ['reconnecting', 'disconnected'],
  reconnecting: ['connected', 'disconnected'],
};

export class StateMachine {
  private current: ConnectionState = 'disconnected';
  private readonly onChange: (next: ConnectionState, previous: ConnectionState) => void;

  constructor(onChange: (next: ConnectionState, previous: ConnectionState) => void) {
    this.onChange = onChange;
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** Moves to `next`; a no-op when already there, an error when the table forbids it. */
  set(next: ConnectionState): void {
    const previous = this.current;
    if (next === previous) return;
    if (!allowed[previous].includes(next)) {
      throw new Error(`invalid state transition ${previous} -> ${next}`);
    }
    this.current = next;
    this.onChange(next, previous);
  }
}
