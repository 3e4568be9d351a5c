/** Building DOM nodes with text (never HTML) content: the safe default for server data. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; text?: string; title?: string; attrs?: Record<string, string> } = {},
  ...children: Node[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.class) node.className = props.class;
  if (props.text !== undefined) node.textContent = props.text;
  if (props.title) node.title = props.title;
  for (const [name, value] of Object.entries(props.attrs ?? {})) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

export function button(text: string, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const node = el("button", { text, attrs: { type: "button", ...attrs } });
  node.addEventListener("click", onClick);
  return node;
}

/** Line icons drawn in inline SVG (no icon font or image: the CSP allows neither from elsewhere). */
const ICONS = {
  menu: "M3 6h18M3 12h18M3 18h18",
  close: "M6 6l12 12M18 6L6 18",
  rename: "M4 20h4L19 9l-4-4L4 16v4z",
  delete: "M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13",
  rewind: "M9 14L4 9l5-5M4 9h10a6 6 0 010 12h-3",
} as const;
export type IconName = keyof typeof ICONS;

export function icon(name: IconName): SVGSVGElement {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [key, value] of Object.entries({ viewBox: "0 0 24 24", width: "18", height: "18", "aria-hidden": "true", focusable: "false" })) {
    svg.setAttribute(key, value);
  }
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

/** A button showing only an icon: its aria-label is what a screen reader says, its title what a pointer shows. */
export function iconButton(name: IconName, label: string, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const node = button("", onClick, { class: "icon", "aria-label": label, title: label, ...attrs });
  node.append(icon(name));
  return node;
}
