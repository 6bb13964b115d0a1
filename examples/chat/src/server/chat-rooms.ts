/**
 * The chat's server-side state, with no I/O: each room's bounded history. Who is in a room
 * is Bayou's presence (`presence: true` on `/chat/*`), not kept here.
 */
import { type ChatMessage, LIMITS } from '../shared/chat-protocol.js';

export interface ChatRoomsOptions {
  /** Messages kept per room. Default `LIMITS.history` (50). */
  historySize?: number;
  /** Rooms kept; past it the room that was written to least recently is forgotten. Default `1000`. */
  maxRooms?: number;
}

export class ChatRooms {
  /** Room → its history, oldest first; the Map's order is the order of last writes. */
  private readonly rooms = new Map<string, ChatMessage[]>();
  private readonly historySize: number;
  private readonly maxRooms: number;

  constructor(options: ChatRoomsOptions = {}) {
    this.historySize = options.historySize ?? LIMITS.history;
    this.maxRooms = options.maxRooms ?? 1000;
  }

  record(message: ChatMessage): void {
    const history = this.rooms.get(message.room) ?? [];
    // Moved to the end: the least recently written room is first, and goes first.
    this.rooms.delete(message.room);
    this.rooms.set(message.room, history);
    history.push(message);
    if (history.length > this.historySize) history.splice(0, history.length - this.historySize);
    for (const name of this.rooms.keys()) {
      if (this.rooms.size <= this.maxRooms) break;
      this.rooms.delete(name);
    }
  }

  history(room: string): ChatMessage[] {
    return [...(this.rooms.get(room) ?? [])];
  }

  get size(): number {
    return this.rooms.size;
  }
}
