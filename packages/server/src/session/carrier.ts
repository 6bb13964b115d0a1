/**
 * The carrier seam: what the kernel knows of a transport. Each transport declares its
 * carrier's kind (`transports/carrier-kinds.ts`) — what it can do, never what it is called —
 * and the kernel, the extensions and the session read only those capabilities.
 *
 * One interface for every transport's carrier (`ConnectCarrier`): a connect is held on it,
 * it answers that connect with one frame (`answer`), and a carrier that pushes (`Carrier`:
 * a WebSocket, a held stream, a stream relayed from another node) writes a frame per flush
 * for as long as it lives; a long-poll (`PendingPoll`) answers once, its response being its
 * one frame. `Connects.complete` answers a held connect the same way on each
 * (`Outbound.answer`).
 */
import type { CarrierKind } from '../types.js';

export type { CarrierKind, ConnectionTypes } from '../types.js';

/** What every transport's carrier does: a connect is held on it, and it answers it. */
export interface ConnectCarrier {
  readonly kind: CarrierKind;
  /**
   * Answers the connect held on it: `messages` (serialized, the connect reply last) as one
   * frame — a long-poll's response, or one frame on a carrier that pushes. Returns its size
   * in bytes.
   */
  answer(messages: string[]): number;
}

/** A carrier a session is bound to, that writes its frames: a WebSocket, a held stream. */
export interface Carrier extends ConnectCarrier {
  /**
   * Sends one text frame: an encoded payload (the same `Buffer` may go to many carriers in
   * a row) or the text of one, encoded straight into the frame. Returns the payload's size
   * in bytes. `messages` is how many messages it holds (a stream counts them).
   */
  sendText(data: Buffer | string, messages?: number): number;
  /**
   * Whether it compresses what it sends, once for a payload many carriers get in a row
   * (a WebSocket that negotiated `permessage-deflate`): then frames whose messages are the
   * same as the frame before's are handed over as one shared payload (`sendParts`).
   */
  readonly compressesShared?: boolean;
  /**
   * Sends one text frame made of `head` (encoded, shared with other carriers: compressed once
   * for all of them) and `tail` (this carrier's own, a numbered frame's marker).
   */
  sendParts?(head: Buffer, tail: string, messages: number): number;
  readonly bufferedAmount: number;
  /**
   * The largest frame payload (bytes) it takes, when bounded (a stream: `streamMaxBytes`
   * less its padding); what is queued then leaves in as many frames as it takes.
   */
  readonly maxFrameBytes?: number;
  /** Ends the carrier; `code`/`reason` as in a WebSocket close. */
  end(code: number, reason: string): void;
}
