/**
 * `useInView`: whether an element is in the viewport (or near it, with `rootMargin`),
 * from one shared IntersectionObserver per root and margin rather than one per element,
 * so a grid of thousands of rows costs one observer.
 */
import { type RefObject, useEffect, useState } from 'react';

export interface InViewOptions {
  /** The scrolling ancestor to intersect with; default the viewport. */
  root?: Element | null;
  /** Grows the root's box: `'200px 0px'` counts rows 200 px above and below as in view. Default `'0px'`. */
  rootMargin?: string;
  /** Don't observe (and keep the last answer). Default `false`. */
  disabled?: boolean;
}

type Callback = (inView: boolean) => void;

interface Shared {
  readonly observer: IntersectionObserver;
  readonly callbacks: Map<Element, Callback>;
}

const byRoot = new WeakMap<Element, Map<string, Shared>>();
const forViewport = new Map<string, Shared>();

function sharedObserver(root: Element | null, rootMargin: string): { shared: Shared; release(): void } {
  let byMargin = root === null ? forViewport : byRoot.get(root);
  if (byMargin === undefined) {
    byMargin = new Map();
    if (root !== null) byRoot.set(root, byMargin);
  }
  const margins = byMargin;
  let shared = margins.get(rootMargin);
  if (shared === undefined) {
    const callbacks = new Map<Element, Callback>();
    const observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) callbacks.get(entry.target)?.(entry.isIntersecting);
      },
      { root, rootMargin },
    );
    shared = { observer, callbacks };
    margins.set(rootMargin, shared);
  }
  const current = shared;
  return {
    shared: current,
    release() {
      if (current.callbacks.size > 0) return;
      current.observer.disconnect();
      if (margins.get(rootMargin) === current) margins.delete(rootMargin);
    },
  };
}

/** Starts reporting whether `element` intersects; returns the function that stops it. */
export function observeInView(element: Element, options: InViewOptions, callback: Callback): () => void {
  const { shared, release } = sharedObserver(options.root ?? null, options.rootMargin ?? '0px');
  shared.callbacks.set(element, callback);
  shared.observer.observe(element);
  return () => {
    shared.callbacks.delete(element);
    shared.observer.unobserve(element);
    release();
  };
}

/**
 * Whether the element in `ref` is in view: `false` until the first observation (and on
 * the server); `true` where there is no IntersectionObserver.
 */
export function useInView(ref: RefObject<Element | null>, options: InViewOptions = {}): boolean {
  const [inView, setInView] = useState(false);
  const { root = null, rootMargin = '0px', disabled = false } = options;
  useEffect(() => {
    const element = ref.current;
    if (disabled || element === null) return;
    if (typeof IntersectionObserver !== 'function') {
      setInView(true);
      return;
    }
    return observeInView(element, { root, rootMargin }, setInView);
  }, [ref, root, rootMargin, disabled]);
  return inView;
}
