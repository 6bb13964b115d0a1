/**
 * The grid page's entry: reads `?rows=` (default 10,000), `?visibleOnly=` (default on) and
 * `?layout=` (`virtual`, the default, or `plain`),
 * connects a `BayouClient` to this server's `/bayeux` and renders the app.
 */
import { BayouClient } from '@bayou/client';
import { BayouProvider } from '@bayou/react';
import { createRoot } from 'react-dom/client';
import { App } from './app.js';

const params = new URLSearchParams(location.search);
const rows = Math.max(1, Math.min(17_576, Number(params.get('rows') ?? 10_000) || 10_000));
const visibleOnly = params.get('visibleOnly') !== '0';
const layout = params.get('layout') === 'plain' ? 'plain' : 'virtual';

const client = new BayouClient(new URL('/bayeux', location.href).href);
void client.connect().catch((error: unknown) => console.error('Bayou connect failed', error));

createRoot(document.getElementById('root')!).render(
  <BayouProvider client={client}>
    <App rows={rows} visibleOnly={visibleOnly} layout={layout} />
  </BayouProvider>,
);
