/**
 * The page's only way to make elements. User strings go in as text nodes
 * (`textContent`), never as markup: nothing a member types can become HTML.
 */

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`missing #${id}`);
  return el as T;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string | null,
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== null) node.className = className;
  // append() turns strings into text nodes.
  node.append(...children);
  return node;
}

export function setText(node: HTMLElement, text: string): void {
  node.textContent = text;
}
