/** The console's two HTML pages: the login form and the shell the bundled script fills. */

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d232b}
header{background:#1d232b;color:#fff;padding:10px 18px;display:flex;gap:16px;align-items:baseline}
header h1{font-size:17px;margin:0}header span{color:#b8c2cc;font-size:13px}
main{padding:14px 18px;display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:14px}
section.wide{grid-column:1/-1}
section{min-width:0;overflow-x:auto;background:#fff;border:1px solid #d7dce2;border-radius:6px;padding:10px 14px}
h2{font-size:14px;margin:0 0 8px;text-transform:uppercase;letter-spacing:.04em;color:#4a5563}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:3px 6px;white-space:nowrap;border-bottom:1px solid #edf0f3;font-variant-numeric:tabular-nums}
th{color:#4a5563;font-weight:600}td.n,th.n{text-align:right}
.bad{color:#b42318;font-weight:600}.ok{color:#067647}
form{display:flex;gap:6px;margin:4px 0}input,textarea{font:inherit;padding:4px 6px;border:1px solid #b8c2cc;border-radius:4px}
form input{flex:1 1 8em;min-width:0}form button{flex:none}
button{font:inherit;padding:4px 12px;border:1px solid #1d232b;background:#1d232b;color:#fff;border-radius:4px;cursor:pointer}
pre{background:#f6f7f9;padding:6px;max-height:220px;overflow:auto;margin:4px 0;font-size:12px}
.result{font-size:13px;min-height:1.4em}.note{font-size:12px;color:#4a5563;margin:6px 0 0}
.login{max-width:320px;margin:12vh auto;background:#fff;border:1px solid #d7dce2;border-radius:6px;padding:20px}
.login form{flex-direction:column}.login form input{flex:none}`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function loginPage(error: string | null): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bayou console: log in</title>
<style>${STYLE}</style></head><body><div class="login"><h1>Bayou console</h1>
<form method="post" action="/admin/login"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" autofocus>
<button type="submit">Log in</button></form>
${error === null ? '' : `<p class="bad" role="alert">${escapeHtml(error)}</p>`}</div></body></html>`;
}

export function consolePage(token: string, bayeuxPath: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bayou console</title>
<meta name="bayou-admin-token" content="${escapeHtml(token)}"><meta name="bayou-path" content="${escapeHtml(bayeuxPath)}">
<style>${STYLE}</style></head><body>
<header><h1>Bayou console</h1><span id="status">connecting…</span></header>
<main>
<section class="wide"><h2>Nodes</h2><table id="nodes"></table><p class="note">★ the node this page is connected to; lag: event-loop delay, mean / max over the last second</p></section>
<section><h2>Messages per second</h2><p class="note">since this page was opened, the last five minutes at most (the page keeps no history: a reload starts again)</p><canvas id="chart" width="560" height="180" style="width:100%"></canvas><div id="rates"></div></section>
<section><h2>Busiest channels</h2><table id="channels"></table></section>
<section><h2>Trouble</h2><table id="trouble"></table></section>
<section><h2>Channel</h2><form id="inspect"><input name="channel" placeholder="/chat/room1" size="28" required><button>Show</button></form><div id="inspected"></div></section>
<section><h2>Actions</h2>
<form id="publish"><input name="channel" placeholder="/chat/room1" size="12" required><input name="data" placeholder='{"text":"hello"}' size="16" required><button>Publish</button></form>
<form id="disconnect"><input name="target" placeholder="clientId or user:alice" size="30" required><button>Disconnect</button></form>
<div class="result" id="result" role="status"></div></section>
</main><script src="/admin/console.js"></script></body></html>`;
}
