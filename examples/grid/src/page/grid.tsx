/**
 * The price grid. Default layout `virtual`: only the rows in view and a few beyond are in
 * the document, positioned in a spacer as tall as all rows. Layout `plain`: all rows are
 * in the document (plain scrolling). Either way, with `visibleOnly` a row holds its record
 * subscription only while it is in the viewport or within `OVERSCAN_PX` of it (useInView);
 * without it every row is subscribed. Rows never re-render on data; each cell re-renders
 * on its own field.
 */
import { demoSubject, demoSymbol } from '@bayou/protocol';
import { ALL_FIELDS, LiveCell, useInView, useRecordHub } from '@bayou/react';
import { memo, type ReactNode, useEffect, useRef, useState } from 'react';
import { COLUMNS } from './columns.js';

/** Row height in CSS pixels (kept in step with style.css). */
export const ROW_HEIGHT = 22;
/** How far beyond the viewport rows stay subscribed: 4 rows above and 4 below. */
export const OVERSCAN_PX = 4 * ROW_HEIGHT;
/** Rows rendered beyond the viewport on each side in the virtual layout (they subscribe only within `OVERSCAN_PX`). */
export const RENDER_OVERSCAN = 10;
const ROOT_MARGIN = `${OVERSCAN_PX}px 0px`;

export type Layout = 'virtual' | 'plain';

export interface GridProps {
  rows: number;
  visibleOnly: boolean;
  layout: Layout;
}

interface RowProps {
  index: number;
  visibleOnly: boolean;
  /** Offset from the top of the rows in the virtual layout. */
  top?: number;
}

const Row = memo(function Row({ index, visibleOnly, top }: RowProps): ReactNode {
  const ref = useRef<HTMLDivElement>(null);
  const inView = useInView(ref, { rootMargin: ROOT_MARGIN, disabled: !visibleOnly });
  const live = !visibleOnly || inView;
  // A row that was never in view has no cells yet: mounting many rows stays cheap.
  const seen = useRef(false);
  if (live) seen.current = true;
  const symbol = demoSymbol(index);
  const subject = demoSubject(symbol);
  return (
    <div
      ref={ref}
      className="row"
      data-symbol={symbol}
      data-live={live ? '1' : '0'}
      style={top === undefined ? undefined : { transform: `translateY(${top}px)` }}
    >
      <span className="cell symbol">{symbol}</span>
      {seen.current &&
        COLUMNS.map((c) => (
          <LiveCell
            key={c.field}
            subject={subject}
            field={c.field}
            format={c.format}
            flash={c.flash}
            enabled={live}
            placeholder="—"
            className={`cell ${c.field}`}
          />
        ))}
    </div>
  );
});

/** The rows in view (and `RENDER_OVERSCAN` more on each side), following the page's scroll. */
function VirtualRows({ rows, visibleOnly }: Omit<GridProps, 'layout'>): ReactNode {
  const ref = useRef<HTMLDivElement>(null);
  const [range, setRange] = useState({ first: 0, last: Math.min(rows, 2 * RENDER_OVERSCAN) });
  useEffect(() => {
    const body = ref.current;
    if (body === null) return;
    let top = 0;
    const update = () => {
      const first = Math.max(0, Math.floor((scrollY - top) / ROW_HEIGHT) - RENDER_OVERSCAN);
      const last = Math.min(rows, Math.ceil((scrollY + innerHeight - top) / ROW_HEIGHT) + RENDER_OVERSCAN);
      setRange((r) => (r.first === first && r.last === last ? r : { first, last }));
    };
    const measure = () => {
      top = body.getBoundingClientRect().top + scrollY;
      update();
    };
    measure();
    addEventListener('scroll', update, { passive: true });
    addEventListener('resize', measure);
    return () => {
      removeEventListener('scroll', update);
      removeEventListener('resize', measure);
    };
  }, [rows]);
  const items: ReactNode[] = [];
  for (let i = range.first; i < range.last; i++)
    items.push(<Row key={i} index={i} visibleOnly={visibleOnly} top={i * ROW_HEIGHT} />);
  return (
    <div ref={ref} className="rows virtual" style={{ height: rows * ROW_HEIGHT }}>
      {items}
    </div>
  );
}

function PlainRows({ rows, visibleOnly }: Omit<GridProps, 'layout'>): ReactNode {
  const items: ReactNode[] = [];
  for (let i = 0; i < rows; i++) items.push(<Row key={i} index={i} visibleOnly={visibleOnly} />);
  return <div className="rows plain">{items}</div>;
}

const ignore = () => {};

/** Without `visibleOnly` in the virtual layout: every row's record subscribed, whether rendered or not. */
function SubscribeAll({ rows }: { rows: number }): null {
  const hub = useRecordHub();
  useEffect(() => {
    const releases: (() => void)[] = [];
    for (let i = 0; i < rows; i++)
      releases.push(hub.watch(hub.store(demoSubject(demoSymbol(i))), ALL_FIELDS, ignore));
    return () => {
      for (const release of releases) release();
    };
  }, [hub, rows]);
  return null;
}

export function Grid({ rows, visibleOnly, layout }: GridProps): ReactNode {
  return (
    <div className="grid" data-rows={rows}>
      <div className="row head">
        <span className="cell symbol">Symbol</span>
        {COLUMNS.map((c) => (
          <span key={c.field} className={`cell ${c.field}`}>
            {c.title}
          </span>
        ))}
      </div>
      {layout === 'plain' ? (
        <PlainRows rows={rows} visibleOnly={visibleOnly} />
      ) : (
        <VirtualRows rows={rows} visibleOnly={visibleOnly} />
      )}
      {!visibleOnly && layout === 'virtual' && <SubscribeAll rows={rows} />}
    </div>
  );
}
