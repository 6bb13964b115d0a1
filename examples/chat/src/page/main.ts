/**
 * The chat page: a join form, then rooms, private conversations, the member list of the
 * current room, and the connection's state and transport. All rendering goes through
 * `dom.ts`, which never interprets a user string as HTML.
 */
import type { BayouError, ConnectionState } from '@bayou/client';
import {
  checkText,
  type HistoryReply,
  LIMITS,
  nameProblem,
  normalizeName,
  normalizeRoom,
  type PrivateMessage,
  type RoomEvent,
  roomProblem,
} from '../shared/chat-protocol.js';
import { ChatConnection } from './chat-connection.js';
import { type Conversation, Conversations, roomKey } from './conversations.js';
import { byId, el, setText } from './dom.js';

const conversations = new Conversations();
let connection: ChatConnection | null = null;

// ---- joining -------------------------------------------------------------------------

byId('name').focus();
byId<HTMLFormElement>('join-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void join();
});

async function join(): Promise<void> {
  const error = byId('join-error');
  const typed = byId<HTMLInputElement>('name').value;
  const name = normalizeName(typed);
  if (name === null) return setText(error, `Name: ${nameProblem(typed)}.`);
  const roomTyped = byId<HTMLInputElement>('room').value || 'lobby';
  const room = normalizeRoom(roomTyped);
  if (room === null) return setText(error, `Room: ${roomProblem(roomTyped)}.`);
  const longPollingOnly = byId<HTMLInputElement>('join-long-polling').checked;
  setText(error, '');
  const joining = new ChatConnection(name, longPollingOnly, handlers);
  try {
    await joining.start();
  } catch (err) {
    await joining.stop();
    return setText(error, describe(err, 'Could not connect'));
  }
  connection = joining;
  setText(byId('me'), name);
  byId<HTMLInputElement>('force-long-polling').checked = longPollingOnly;
  byId('join-screen').hidden = true;
  byId('chat-screen').hidden = false;
  showConnection();
  await openRoom(room);
}

// ---- events from the server ----------------------------------------------------------

const handlers = {
  roomEvent(room: string, event: RoomEvent): void {
    const conversation = conversations.get(roomKey(room));
    if (conversation === undefined) return;
    if (event.type === 'message' && conversations.addMessages(conversation, [event]) > 0)
      touched(conversation);
  },
  members(room: string, users: string[]): void {
    const conversation = conversations.get(roomKey(room));
    if (conversation === undefined) return;
    conversation.members = users;
    render();
  },
  memberChange(room: string, user: string, action: 'joined' | 'left'): void {
    const conversation = conversations.get(roomKey(room));
    if (conversation === undefined) return;
    conversations.addSystem(conversation, `${user} ${action}`);
    render();
  },
  history(reply: HistoryReply): void {
    const conversation = conversations.get(roomKey(reply.room));
    if (conversation === undefined) return;
    conversations.addMessages(conversation, reply.messages);
    render();
  },
  privateMessage(message: PrivateMessage): void {
    const me = connection?.user;
    const conversation = conversations.open('dm', message.from === me ? message.to : message.from);
    if (conversations.addMessages(conversation, [message]) > 0) touched(conversation);
  },
  state(_state: ConnectionState): void {
    showConnection();
  },
  transport(_name: string | null): void {
    showConnection();
  },
  problem(text: string): void {
    setText(byId('composer-error'), text);
  },
  slowed(slowed: boolean): void {
    byId('slow-notice').hidden = !slowed;
  },
};

function touched(conversation: Conversation): void {
  if (conversation.key !== conversations.activeKey) conversation.unread++;
  render();
}

// ---- user actions --------------------------------------------------------------------

async function openRoom(room: string): Promise<void> {
  if (connection === null) return;
  const conversation = conversations.open('room', room);
  select(conversation.key);
  try {
    await connection.join(room);
    setText(byId('room-error'), '');
  } catch (err) {
    leaveRoom(room);
    setText(byId('room-error'), describe(err, `Could not join ${room}`));
  }
}

function leaveRoom(room: string): void {
  connection?.leave(room);
  conversations.remove(roomKey(room));
  render();
}

function select(key: string): void {
  conversations.activeKey = key;
  const conversation = conversations.get(key);
  if (conversation !== undefined) conversation.unread = 0;
  setText(byId('composer-error'), '');
  render();
  byId('text').focus();
}

byId<HTMLFormElement>('room-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = byId<HTMLInputElement>('new-room');
  const room = normalizeRoom(input.value);
  if (room === null) return setText(byId('room-error'), `${capitalized(roomProblem(input.value))}.`);
  setText(byId('room-error'), '');
  input.value = '';
  void openRoom(room);
});

byId<HTMLFormElement>('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  void sendMessage();
});

async function sendMessage(): Promise<void> {
  const conversation = conversations.active;
  const input = byId<HTMLInputElement>('text');
  const error = byId('composer-error');
  if (connection === null || conversation === undefined) return;
  const checked = checkText(input.value);
  if (!checked.ok) {
    if (checked.reason === 'text_too_long') setText(error, `At most ${LIMITS.textLength} characters.`);
    return;
  }
  input.value = '';
  setText(error, '');
  try {
    if (conversation.kind === 'room') await connection.send(conversation.name, checked.text);
    else await connection.sendPrivate(conversation.name, checked.text);
  } catch (err) {
    setText(error, describe(err, 'Not sent'));
  }
}

byId<HTMLInputElement>('force-long-polling').addEventListener('change', (event) => {
  const checked = (event.target as HTMLInputElement).checked;
  connection?.switchTransports(checked).catch((err: unknown) => {
    setText(byId('composer-error'), describe(err, 'Could not reconnect'));
  });
  showConnection();
});

// ---- rendering -----------------------------------------------------------------------

function render(): void {
  renderList('rooms', conversations.list('room'), (c) => `# ${c.name}`, true);
  renderList('dms', conversations.list('dm'), (c) => `@ ${c.name}`, false);
  const conversation = conversations.active;
  setText(
    byId('title'),
    conversation === undefined
      ? ''
      : conversation.kind === 'room'
        ? `# ${conversation.name}`
        : `Private: ${conversation.name}`,
  );
  renderMessages(conversation);
  renderMembers(conversation);
}

function renderList(
  id: string,
  items: Conversation[],
  label: (c: Conversation) => string,
  leavable: boolean,
): void {
  const list = byId(id);
  list.replaceChildren(
    ...items.map((c) => {
      const open = el('button', 'item', label(c));
      open.type = 'button';
      open.addEventListener('click', () => select(c.key));
      const li = el('li', c.key === conversations.activeKey ? 'active' : null, open);
      li.dataset.name = c.name;
      if (c.unread > 0) li.append(el('span', 'badge', String(c.unread)));
      if (leavable) {
        const leave = el('button', 'leave', '×');
        leave.type = 'button';
        leave.title = `Leave ${c.name}`;
        leave.setAttribute('aria-label', `Leave ${c.name}`);
        leave.addEventListener('click', () => leaveRoom(c.name));
        li.append(leave);
      }
      return li;
    }),
  );
}

function renderMessages(conversation: Conversation | undefined): void {
  const list = byId('messages');
  const me = connection?.user;
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren(
    ...(conversation?.lines ?? []).map((line) => {
      if (line.kind === 'system') return el('li', 'system', line.text);
      const time = new Date(line.ts).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
      const li = el(
        'li',
        line.user === me ? 'message mine' : 'message',
        el('span', 'who', line.user),
        el('span', 'text', line.text),
        el('span', 'time', time),
      );
      li.dataset.id = line.id;
      return li;
    }),
  );
  if (atBottom) list.scrollTop = list.scrollHeight;
}

function renderMembers(conversation: Conversation | undefined): void {
  const members = conversation?.kind === 'room' ? conversation.members : [];
  const me = connection?.user;
  setText(byId('member-count'), conversation?.kind === 'room' ? `(${members.length})` : '');
  byId('members').replaceChildren(
    ...members.map((name) => {
      const button = el('button', 'item', name === me ? `${name} (you)` : name);
      button.type = 'button';
      if (name !== me) {
        button.title = `Message ${name} privately`;
        button.addEventListener('click', () => select(conversations.open('dm', name).key));
      }
      const li = el('li', null, button);
      li.dataset.name = name;
      return li;
    }),
  );
}

function showConnection(): void {
  const state = byId('state');
  const transport = byId('transport');
  const current = connection?.state ?? 'disconnected';
  const name = current === 'connected' ? (connection?.transport ?? null) : null;
  setText(state, current);
  state.dataset.state = current;
  setText(transport, name ?? '—');
  transport.dataset.transport = name ?? '';
}

function capitalized(text: string | null): string {
  return text === null ? '' : text.charAt(0).toUpperCase() + text.slice(1);
}

function describe(err: unknown, fallback: string): string {
  const error = err as Partial<BayouError> | null;
  switch (error?.bayeux?.message ?? error?.code) {
    case 'BAYOU_ERR_HANDSHAKE_DENIED':
      return 'The server refused this name.';
    case 'text_too_long':
      return `At most ${LIMITS.textLength} characters.`;
    case 'user_offline':
      return 'That member is offline.';
    case 'not_in_room':
      return 'Join the room first.';
    default:
      return `${fallback}: ${error?.message ?? String(err)}`;
  }
}
