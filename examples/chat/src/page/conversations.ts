/**
 * What the page remembers: one conversation per joined room and per private partner, each
 * with its lines (deduplicated by message id, ordered by server time, bounded) and, for
 * rooms, the member list.
 */
import type { ChatMessage, PrivateMessage } from '../shared/chat-protocol.js';

export interface Line {
  id: string;
  kind: 'message' | 'system';
  user: string;
  text: string;
  ts: number;
}

export interface Conversation {
  readonly key: string;
  readonly kind: 'room' | 'dm';
  /** Room name, or the other member's name. */
  readonly name: string;
  lines: Line[];
  readonly ids: Set<string>;
  members: string[];
  unread: number;
}

const MAX_LINES = 500;
let localId = 0;

export const roomKey = (room: string): string => `room:${room}`;
export const dmKey = (user: string): string => `dm:${user}`;

export class Conversations {
  private readonly all = new Map<string, Conversation>();
  activeKey: string | null = null;

  get(key: string): Conversation | undefined {
    return this.all.get(key);
  }

  get active(): Conversation | undefined {
    return this.activeKey === null ? undefined : this.all.get(this.activeKey);
  }

  list(kind: Conversation['kind']): Conversation[] {
    return [...this.all.values()].filter((c) => c.kind === kind);
  }

  open(kind: Conversation['kind'], name: string): Conversation {
    const key = kind === 'room' ? roomKey(name) : dmKey(name);
    let conversation = this.all.get(key);
    if (conversation === undefined) {
      conversation = { key, kind, name, lines: [], ids: new Set(), members: [], unread: 0 };
      this.all.set(key, conversation);
    }
    return conversation;
  }

  remove(key: string): void {
    this.all.delete(key);
    if (this.activeKey === key) this.activeKey = this.all.keys().next().value ?? null;
  }

  /** Adds messages not seen yet; returns how many were new. */
  addMessages(conversation: Conversation, messages: (ChatMessage | PrivateMessage)[]): number {
    let added = 0;
    for (const m of messages) {
      if (conversation.ids.has(m.id)) continue;
      conversation.ids.add(m.id);
      const user = m.type === 'message' ? m.user : m.from;
      conversation.lines.push({ id: m.id, kind: 'message', user, text: m.text, ts: m.ts });
      added++;
    }
    if (added > 0) this.settle(conversation);
    return added;
  }

  addSystem(conversation: Conversation, text: string): void {
    conversation.lines.push({ id: `local-${++localId}`, kind: 'system', user: '', text, ts: Date.now() });
    this.settle(conversation);
  }

  private settle(conversation: Conversation): void {
    // Array.prototype.sort is stable: lines with the same time keep their arrival order.
    conversation.lines.sort((a, b) => a.ts - b.ts);
    if (conversation.lines.length > MAX_LINES) {
      for (const line of conversation.lines.splice(0, conversation.lines.length - MAX_LINES)) {
        conversation.ids.delete(line.id);
      }
    }
  }
}
