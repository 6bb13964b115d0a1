/** The page: a status bar (connection, live subscriptions, updates per second) over the grid. */
import { useConnectionState, useLiveStats, useTransport } from '@bayou/react';
import type { ReactNode } from 'react';
import { Grid, type GridProps } from './grid.js';

export type GridSettings = GridProps;

function StatusBar({ rows, visibleOnly, layout }: GridSettings): ReactNode {
  const state = useConnectionState();
  const transport = useTransport();
  const { liveRecords, updatesPerSecond } = useLiveStats();
  const other = `?rows=${rows}&layout=${layout}&visibleOnly=${visibleOnly ? 0 : 1}`;
  return (
    <header className="status">
      <strong>Bayou live grid</strong>
      <span>
        <b id="rows">{rows.toLocaleString('en-US')}</b> rows × 6 fields, {layout}
      </span>
      <span>
        live subscriptions <b id="live">{liveRecords}</b>
      </span>
      <span>
        updates/s <b id="ups">{updatesPerSecond}</b>
      </span>
      <span>
        <b id="state" data-state={state}>
          {state}
        </b>{' '}
        <span id="transport">{transport ?? ''}</span>
      </span>
      <a id="toggle" href={other}>
        visibleOnly {visibleOnly ? 'on' : 'off'}
      </a>
    </header>
  );
}

export function App(settings: GridSettings): ReactNode {
  return (
    <>
      <StatusBar {...settings} />
      <Grid {...settings} />
    </>
  );
}
