/**
 * Up/down flashes on live cells: a class added to the element and removed a little later
 * by one shared sweep timer (no timer per cell, no layout reads or writes).
 */

export const FLASH_UP = 'bayou-flash-up';
export const FLASH_DOWN = 'bayou-flash-down';
const SWEEP_MS = 50;

const until = new Map<Element, number>();
let timer: ReturnType<typeof setInterval> | null = null;

/** Marks `element` as just gone up (or down) for `ms` milliseconds. */
export function flashElement(element: Element, up: boolean, ms: number): void {
  element.classList.remove(up ? FLASH_DOWN : FLASH_UP);
  element.classList.add(up ? FLASH_UP : FLASH_DOWN);
  until.set(element, Date.now() + ms);
  if (timer === null) timer = setInterval(sweep, SWEEP_MS);
}

/** Forgets `element` (it is unmounting). */
export function cancelFlash(element: Element): void {
  until.delete(element);
}

function sweep(): void {
  const now = Date.now();
  for (const [element, end] of until) {
    if (end > now) continue;
    until.delete(element);
    element.classList.remove(FLASH_UP, FLASH_DOWN);
  }
  if (until.size === 0 && timer !== null) {
    clearInterval(timer);
    timer = null;
  }
}
