/**
 * The console page's script (bundled by build.mjs into dist/admin/console.js): connects to
 * Bayou with the console token in its handshake, renders each cluster snapshot of the
 * feed, and runs the operator's actions as admin service calls.
 */
import { BayouClient } from '@bayou/client';
import { drawChart, type RatePoint } from './chart.js';

interface NodeStats {
  nodeId: string;
  at: number;
  sessions: number;
  websockets: number;
  /** Absent from a node of an earlier version. */
  streaming?: number;
  eventSources?: number;
  longPolls: number;
  rss: number;
  heapUsed: number;
  lagMeanMs: number;
  lagMaxMs: number;
  publishes: number;
  delivered: number;
  slowConsumers: number;
  limitRefusals: number;
  engineErrors: number;
  engineReady: boolean;
  engineReconnects: number;
  webhookFailures: number;
  bySubscribers: [string, number][];
  byRate: [string, number][];
}
type NodeEntry = NodeStats | { nodeId: string; error: string };
interface Snapshot {
  at: number;
  via: string;
  nodes: NodeEntry[];
}

const FEED = '/bayou/admin/stats';
/** Five minutes of one-second points. */
const KEEP_POINTS = 300;

const meta = (name: string) => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';
const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number) => `${fmt(bytes / 1048576)} MB`;
const esc = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const points: RatePoint[] = [];
/** Per node, its previous figures: rates are differences of cumulative counters. */
const previous = new Map<string, NodeStats>();

function ratesOf(nodes: NodeStats[]): RatePoint {
  let published = 0;
  let delivered = 0;
  for (const n of nodes) {
    const before = previous.get(n.nodeId);
    const seconds = before === undefined ? 0 : (n.at - before.at) / 1000;
    // A restarted node starts its counters again: no rate from that pair.
    if (before !== undefined && seconds > 0 && n.publishes >= before.publishes) {
      published += (n.publishes - before.publishes) / seconds;
      delivered += (n.delivered - before.delivered) / seconds;
    }
  }
  previous.clear();
  for (const n of nodes) previous.set(n.nodeId, n);
  return { at: Date.now(), published, delivered };
}

function table(id: string, head: string[], rows: string[][], attrs: string[] = []): void {
  const th = head.map((h, i) => `<th${i > 0 ? ' class="n"' : ''}>${h}</th>`).join('');
  const body = rows
    .map(
      (r, j) =>
        `<tr ${attrs[j] ?? ''}>${r.map((c, i) => `<td${i > 0 ? ' class="n"' : ''}>${c}</td>`).join('')}</tr>`,
    )
    .join('');
  byId(id).innerHTML = `<thead><tr>${th}</tr></thead><tbody>${body}</tbody>`;
}

function merged(nodes: NodeStats[], pick: (n: NodeStats) => [string, number][]): [string, number][] {
  const totals = new Map<string, number>();
  for (const n of nodes) for (const [c, v] of pick(n)) totals.set(c, (totals.get(c) ?? 0) + v);
  return [...totals].sort((a, b) => b[1] - a[1]).slice(0, 10);
}

/** Every transport with its open connections: WebSocket, streaming, EventSource, held long-polls. */
function transports(n: NodeStats): string {
  const parts: [number | undefined, string][] = [
    [n.websockets, 'ws'],
    [n.streaming, 'stream'],
    [n.eventSources, 'sse'],
    [n.longPolls, 'lp'],
  ];
  return parts.map(([count, name]) => `${fmt(count ?? 0)} ${name}`).join(' · ');
}

function render(snapshot: Snapshot): void {
  const live = snapshot.nodes.filter((n): n is NodeStats => !('error' in n));
  const rows = snapshot.nodes.map((n) =>
    'error' in n
      ? [esc(n.nodeId), `<span class="bad">${esc(n.error)}</span>`, '', '', '', '', '']
      : [
          esc(n.nodeId) + (n.nodeId === snapshot.via ? ' ★' : ''),
          fmt(n.sessions),
          transports(n),
          mb(n.rss),
          mb(n.heapUsed),
          `${n.lagMeanMs.toFixed(1)} / ${n.lagMaxMs.toFixed(0)}`,
          n.engineReady ? '<span class="ok">ok</span>' : '<span class="bad">unavailable</span>',
        ],
  );
  const attrs = snapshot.nodes.map((n) => `data-node="${esc(n.nodeId)}"`);
  table('nodes', ['node', 'sessions', 'transports', 'RSS', 'heap', 'lag ms', 'engine'], rows, attrs);

  const point = ratesOf(live);
  points.push(point);
  if (points.length > KEEP_POINTS) points.shift();
  drawChart(byId<HTMLCanvasElement>('chart'), points);
  byId('rates').innerHTML =
    `<b>published</b> <span id="rate-published">${fmt(point.published)}</span>/s · ` +
    `<b>delivered</b> <span id="rate-delivered">${fmt(point.delivered)}</span>/s`;

  const subs = merged(live, (n) => n.bySubscribers);
  const rates = merged(live, (n) => n.byRate);
  const channelRows: string[][] = [];
  for (let i = 0; i < Math.max(subs.length, rates.length); i++) {
    const s = subs[i];
    const r = rates[i];
    channelRows.push([s ? esc(s[0]) : '', s ? fmt(s[1]) : '', r ? esc(r[0]) : '', r ? `${fmt(r[1])}/s` : '']);
  }
  table('channels', ['by subscribers', '', 'by publish rate', ''], channelRows);

  const sum = (f: (n: NodeStats) => number) => live.reduce((a, n) => a + f(n), 0);
  const trouble: [string, number][] = [
    ['slow consumers dropped', sum((n) => n.slowConsumers)],
    ['limit refusals', sum((n) => n.limitRefusals)],
    ['engine errors (Redis)', sum((n) => n.engineErrors)],
    ['engine reconnects (Redis)', sum((n) => n.engineReconnects)],
    ['webhook failures', sum((n) => n.webhookFailures)],
  ];
  table(
    'trouble',
    ['since the nodes started', 'count'],
    trouble.map(([k, v]) => [
      k,
      v > 0 && k.startsWith('engine') ? `<span class="bad">${fmt(v)}</span>` : fmt(v),
    ]),
  );
}

function say(text: string, bad = false): void {
  const el = byId('result');
  el.textContent = text;
  el.className = `result ${bad ? 'bad' : 'ok'}`;
}

function onSubmit(id: string, run: (form: FormData) => Promise<void>): void {
  byId<HTMLFormElement>(id).addEventListener('submit', (event) => {
    event.preventDefault();
    run(new FormData(event.target as HTMLFormElement)).catch((err: Error) => say(err.message, true));
  });
}

function parseData(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const client = new BayouClient(meta('bayou-path') || '/bayeux', {
  handshake: () => ({ bayouAdmin: meta('bayou-admin-token') }),
});
client.on('state', (state) => {
  byId('status').textContent = state;
});
client.subscribe(FEED, (message) => render(message.data as Snapshot));
void client.connect();

onSubmit('publish', async (form) => {
  const channel = String(form.get('channel'));
  await client.request('/service/bayou/admin/publish', {
    channel,
    data: parseData(String(form.get('data'))),
  });
  say(`published to ${channel}`);
});
onSubmit('disconnect', async (form) => {
  const target = String(form.get('target')).trim();
  const body = target.startsWith('user:') ? { user: target.slice(5) } : { clientId: target };
  const r = await client.request<{ disconnected: number }>('/service/bayou/admin/disconnect', body);
  say(`${target}: ${r.disconnected} session(s) ended`, r.disconnected === 0);
});
onSubmit('inspect', async (form) => {
  const channel = String(form.get('channel'));
  const r = await client.request<{
    history: { data: unknown }[];
    presence: { clientId: string; user?: string }[] | null;
  }>('/service/bayou/admin/inspect', { channel });
  const presence =
    r.presence === null
      ? 'no presence kept for this channel'
      : `${r.presence.length} present: ${r.presence.map((m) => m.user ?? m.clientId).join(', ')}`;
  byId('inspected').innerHTML =
    `<p>${esc(presence)}</p><p>last ${r.history.length} message(s):</p>` +
    `<pre>${esc(r.history.map((m) => JSON.stringify(m.data)).join('\n'))}</pre>`;
});
