/**
 * A look at the server before a chat, feed or connections run: the run would otherwise
 * connect nobody, publish into the void and report every message lost. Nothing listening at
 * --url, or a handshake refused (wrong or missing credentials), ends the CLI at once with
 * exit code 2 and the fix. One handshake over HTTP with the run's headers and ext; its
 * session is disconnected. A server that answers anything else (no long-polling, a proxy)
 * is left to the run, which reports what it finds.
 */
import { META_DISCONNECT, META_HANDSHAKE } from '@bayou/protocol';
import { assertReachable } from './chaos/reach.js';
import { handshakeExt } from './driver.js';
import { LoadtestError, LoadtestErrors } from './errors.js';
import { headerMap } from './option-values.js';
import type { LoadtestOptions } from './options.js';

interface Reply {
  channel?: string;
  successful?: boolean;
  clientId?: string;
  error?: string;
}

export async function preflight(options: Readonly<LoadtestOptions>): Promise<void> {
  await assertReachable(options.url);
  const url = options.url.replace(/^ws/, 'http');
  const headers = { ...headerMap(options.headers), 'content-type': 'application/json' };
  const ext = handshakeExt({ handshakeExt: options.handshakeExt });
  const body = `[{"channel":"${META_HANDSHAKE}","version":"1.0","supportedConnectionTypes":["long-polling","websocket"]${ext}}]`;
  let reply: Reply | undefined;
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
    reply = ((await response.json()) as Reply[])[0];
  } catch {
    return; // not a long-polling answer: the run finds out what this server speaks
  }
  if (reply?.channel !== META_HANDSHAKE) return;
  if (reply.successful === true) {
    const bye = JSON.stringify([{ channel: META_DISCONNECT, clientId: reply.clientId }]);
    await fetch(url, { method: 'POST', headers, body: bye, signal: AbortSignal.timeout(5000) }).catch(
      () => {},
    );
    return;
  }
  throw new LoadtestError(
    LoadtestErrors.SETUP_FAILED,
    `the server at ${options.url} refused the handshake (${reply.error ?? 'no error given'}): pass the credentials it wants — --token <jwt> (sent as ext.auth.token, what bayou start --jwt-secret checks), --handshake-ext '<json>' or --header 'name: value'`,
  );
}
