/**
 * The chat's server-side state, with no I/O: each room's bounded history and who is in it.
 * A user may be in a room from several sessions (two tabs); they count once in the member
 * list and leave it when their last session does.
 */
import { type ChatMessage, LIMITS } from '../shared/chat-protocol.js';

interface Room {
  /** Oldest first, at most `historySize`. */
  readonly history: ChatMessage[];
  /** User name → number of that user's sessions in the room. */
  readonly members: Map<string, number>;
}

export interface ChatRoomsOptions {
  /** Messages kept per room. Default `LIMITS.history` (50). */
  historySize?: number;
  /** Rooms kept; past it the least recently created empty room is forgotten. Default `1000`. */
  maxRooms?: number;
}

export class ChatRooms {
  private readonly rooms = new Map<string, Room>();
  private readonly historySize: number;
  private readonly maxRooms: number;

  constructor(options: ChatRoomsOptions = {}) {
    this.historySize = options.historySize ?? LIMITS.history;
    this.maxRooms = options.maxRooms ?? 1000;
  }

  /** Adds one session of `user`; returns true when the user was not in the room before. */
  join(room: string, user: string): boolean {
    const members = this.room(room).members;
    const n = members.get(user) ?? 0;
    members.set(user, n + 1);
    return n === 0;
  }

  /** Removes one session of `user`; returns true when that was the user's last one. */
  leave(room: string, user: string): boolean {
    const members = this.rooms.get(room)?.members;
    const n = members?.get(user);
    if (members === undefined || n === undefined) return false;
    if (n > 1) {
      members.set(user, n - 1);
      return false;
    }
    members.delete(user);
    return true;
  }

  /** Member names, sorted for display. */
  members(room: string): string[] {
    const members = this.rooms.get(room)?.members;
    return members === undefined ? [] : [...members.keys()].sort((a, b) => a.localeCompare(b));
  }

  has(room: string, user: string): boolean {
    return this.rooms.get(room)?.members.has(user) ?? false;
  }

  record(message: ChatMessage): void {
    const history = this.room(message.room).history;
    history.push(message);
    if (history.length > this.historySize) history.splice(0, history.length - this.historySize);
  }

  history(room: string): ChatMessage[] {
    return [...(this.rooms.get(room)?.history ?? [])];
  }

  get size(): number {
    return this.rooms.size;
  }

  private room(name: string): Room {
    let room = this.rooms.get(name);
    if (room === undefined) {
      room = { history: [], members: new Map() };
      this.rooms.set(name, room);
      this.evict();
    }
    return room;
  }

  /** Keeps memory bounded however many room names clients invent. */
  private evict(): void {
    if (this.rooms.size <= this.maxRooms) return;
    for (const [name, room] of this.rooms) {
      if (room.members.size === 0) {
        this.rooms.delete(name);
        if (this.rooms.size <= this.maxRooms) return;
      }
    }
  }
}
