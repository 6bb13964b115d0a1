/** The grid's columns: the six fields of a demo price record and how each is shown. */
const price = (v: unknown): string => (typeof v === 'number' ? v.toFixed(3) : String(v));
const volumeFormat = new Intl.NumberFormat('en-US');

export interface Column {
  readonly field: string;
  readonly title: string;
  readonly format: (value: unknown) => string;
  /** Flash up/down on change (not for the clock). */
  readonly flash: boolean;
}

export const COLUMNS: readonly Column[] = [
  { field: 'bid', title: 'Bid', format: price, flash: true },
  { field: 'ask', title: 'Ask', format: price, flash: true },
  { field: 'last', title: 'Last', format: price, flash: true },
  {
    field: 'change',
    title: 'Change',
    format: (v) => (typeof v === 'number' ? (v > 0 ? '+' : '') + v.toFixed(3) : String(v)),
    flash: true,
  },
  {
    field: 'volume',
    title: 'Volume',
    format: (v) => (typeof v === 'number' ? volumeFormat.format(v) : String(v)),
    flash: false,
  },
  {
    field: 'time',
    title: 'Time',
    format: (v) => (typeof v === 'number' ? new Date(v).toISOString().slice(11, 19) : String(v)),
    flash: false,
  },
];
