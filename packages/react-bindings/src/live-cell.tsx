/**
 * `<LiveCell subject field />`: one field of a live record as text. It re-renders only
 * when its own field's value changes (at most once per frame), flashes up or down on
 * numeric changes, and with `visibleOnly` holds its subscription only while in view.
 */
import { createElement, memo, type ReactNode, type RefObject, useEffect, useRef } from 'react';
import { cancelFlash, flashElement } from './flash.js';
import { type InViewOptions, useInView } from './use-in-view.js';
import { useFieldValue } from './use-record.js';

export interface LiveCellProps {
  /** The record subject, e.g. `/demo/prices/AAA`. */
  subject: string;
  /** The field shown. */
  field: string;
  /** Turns the value into what is shown. Default `String(value)`. */
  format?: (value: unknown) => ReactNode;
  /**
   * Flash on numeric changes: the class `bayou-flash-up` or `bayou-flash-down` for this
   * many milliseconds (`true` = 600). Default `true`.
   */
  flash?: boolean | number;
  /** Subscribe only while the cell is in view; an object sets the observer's root and margin. Default `false`. */
  visibleOnly?: boolean | Omit<InViewOptions, 'disabled'>;
  /** Subscribe only while true (e.g. when the row is in view). Default `true`. */
  enabled?: boolean;
  /** Shown before the first value. Default empty. */
  placeholder?: ReactNode;
  /** The element rendered. Default `'span'`. */
  as?: 'span' | 'div' | 'td';
  className?: string;
}

const FLASH_MS = 600;

function LiveCellImpl({
  subject,
  field,
  format,
  flash = true,
  visibleOnly = false,
  enabled = true,
  placeholder = '',
  as = 'span',
  className,
}: LiveCellProps): ReactNode {
  const ref = useRef<HTMLElement>(null);
  const view = typeof visibleOnly === 'object' ? visibleOnly : {};
  const inView = useInView(ref, { root: view.root, rootMargin: view.rootMargin, disabled: !visibleOnly });
  const value = useFieldValue(subject, field, { enabled: enabled && (!visibleOnly || inView) });
  useFlash(ref, value, flash === true ? FLASH_MS : flash === false ? 0 : flash);
  const shown = value === undefined || value === null ? placeholder : format ? format(value) : String(value);
  return createElement(as, { ref, className, 'data-field': field }, shown);
}

export const LiveCell = memo(LiveCellImpl);

function useFlash(ref: RefObject<HTMLElement | null>, value: unknown, ms: number): void {
  const previous = useRef(value);
  useEffect(() => {
    const before = previous.current;
    previous.current = value;
    const element = ref.current;
    if (ms <= 0 || element === null || typeof value !== 'number' || typeof before !== 'number') return;
    if (value !== before) flashElement(element, value > before, ms);
  }, [ref, value, ms]);
  useEffect(() => {
    const element = ref.current;
    return () => {
      if (element !== null) cancelFlash(element);
    };
  }, [ref]);
}
