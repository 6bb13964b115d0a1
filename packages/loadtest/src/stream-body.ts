/**
 * The two bodies a streamed response carries, cut into the JSON texts they hold: Bayou's
 * `streaming` body (one frame per line, blank lines being padding and heartbeats) and an
 * EventSource body (`data:` lines, an event ending at a blank line, `:` comments, `retry:`).
 * Both drivers (lean and browser-like) feed text in as it arrives, in pieces of any size.
 */

/** Receives each frame's text (a JSON array of Bayeux messages, or more for a marker). */
export type FrameSink<C> = (ctx: C, text: string) => void;

export interface BodyReader<C> {
  push(ctx: C, text: string, onFrame: FrameSink<C>): void;
  /** Forgets a partial line (a new response starts). */
  reset(): void;
}

/** `streaming`: a line that is not blank is a frame. */
export class NdjsonReader<C> implements BodyReader<C> {
  private rest = '';

  push(ctx: C, text: string, onFrame: FrameSink<C>): void {
    const s = this.rest.length === 0 ? text : this.rest + text;
    let from = 0;
    for (let eol = s.indexOf('\n'); eol >= 0; eol = s.indexOf('\n', from)) {
      const line = s.slice(from, eol);
      from = eol + 1;
      // The padding line is 2,048 spaces and a heartbeat an empty line: skip without trimming.
      if (line.length > 0 && (line.charCodeAt(0) === 0x5b || line.trim() !== '')) onFrame(ctx, line);
    }
    this.rest = from === s.length ? '' : s.slice(from);
  }

  reset(): void {
    this.rest = '';
  }
}

/** EventSource: the `data` of each event, and the `retry` the server asked for. */
export class SseReader<C> implements BodyReader<C> {
  private rest = '';
  private data: string | undefined;
  /** ms, from the last `retry:` field (the EventSource default until one arrives). */
  retry = 3000;

  push(ctx: C, text: string, onFrame: FrameSink<C>): void {
    const s = this.rest.length === 0 ? text : this.rest + text;
    let from = 0;
    for (let eol = s.indexOf('\n'); eol >= 0; eol = s.indexOf('\n', from)) {
      const end = eol > from && s.charCodeAt(eol - 1) === 0x0d ? eol - 1 : eol;
      this.line(ctx, s.slice(from, end), onFrame);
      from = eol + 1;
    }
    this.rest = from === s.length ? '' : s.slice(from);
  }

  private line(ctx: C, line: string, onFrame: FrameSink<C>): void {
    if (line.length === 0) {
      const data = this.data;
      this.data = undefined;
      if (data !== undefined) onFrame(ctx, data);
      return;
    }
    if (line.charCodeAt(0) === 0x3a) return; // ':' a comment (a ping)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    if (field === 'data') this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }

  reset(): void {
    this.rest = '';
    this.data = undefined;
  }
}
