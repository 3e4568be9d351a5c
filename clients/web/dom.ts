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
