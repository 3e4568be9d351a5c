/**
 * The `/` command menu of the message box: typing `/` at the start lists the
 * prompt templates commands.list finds for the open conversation (name,
 * argument hint, description), narrowed as the name is typed. Arrow keys move,
 * Enter or Tab takes one (the box then reads `/name `, for the arguments),
 * Escape closes. A listbox the message box points at (aria-controls,
 * aria-activedescendant), so a screen reader follows the highlighted entry.
 */
import type { CommandsListResult } from "../typescript/index.js";
import { el } from "./dom.js";

export type CommandInfo = CommandsListResult["commands"][number];

/** `/name rest` as typed: the name (commands.list's pattern) and the arguments. */
const TYPED = /^\/([A-Za-z0-9][A-Za-z0-9_-]{0,63})(?:\s+([\s\S]*))?$/;

export class CommandMenu {
  readonly node = el("ul", { class: "command-menu", attrs: { id: "command-menu", role: "listbox", "aria-label": "Commands" } });
  #commands: CommandInfo[] | undefined;
  #loading: Promise<CommandInfo[]> | undefined;
  #shown: CommandInfo[] = [];
  #active = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly load: () => Promise<CommandInfo[]>,
  ) {
    this.node.hidden = true;
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", "command-menu");
    input.addEventListener("input", () => void this.#update());
    input.addEventListener("blur", () => this.#close());
  }

  /** Another conversation (another workspace): read the commands again when next asked. */
  reset(): void {
    this.#commands = undefined;
    this.#loading = undefined;
    this.#close();
  }

  /** The command a message stands for (`/name args` with a known name), else undefined: the text is sent as it is. */
  async commandFor(text: string): Promise<{ command: string; arguments: string } | undefined> {
    const typed = TYPED.exec(text);
    if (!typed) return undefined;
    const known = await this.#list().catch(() => []);
    if (!known.some((c) => c.name === typed[1])) return undefined;
    return { command: typed[1], arguments: (typed[2] ?? "").trim() };
  }

  /** A key pressed in the message box: true when the open menu took it. */
  handleKey(event: KeyboardEvent): boolean {
    if (this.node.hidden || event.isComposing) return false;
    switch (event.key) {
      case "ArrowDown":
      case "ArrowUp":
        this.#active = (this.#active + (event.key === "ArrowDown" ? 1 : this.#shown.length - 1)) % this.#shown.length;
        this.#render();
        break;
      case "Enter":
      case "Tab":
        if (event.shiftKey || event.altKey) return false;
        this.#choose(this.#shown[this.#active]);
        break;
      case "Escape":
        this.#close();
        break;
      default:
        return false;
    }
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  #list(): Promise<CommandInfo[]> {
    if (this.#commands) return Promise.resolve(this.#commands);
    this.#loading ??= this.load().then(
      (commands) => (this.#commands = commands),
      (error: unknown) => {
        this.#loading = undefined;
        throw error;
      },
    );
    return this.#loading;
  }

  async #update(): Promise<void> {
    const typing = /^\/([A-Za-z0-9_-]*)$/.exec(this.input.value);
    if (!typing) return this.#close();
    // A lone "/" reads the templates again: one added since is offered.
    if (this.input.value === "/") {
      this.#commands = undefined;
      this.#loading = undefined;
    }
    let commands: CommandInfo[];
    try {
      commands = await this.#list();
    } catch {
      return this.#close();
    }
    const now = /^\/([A-Za-z0-9_-]*)$/.exec(this.input.value);
    if (!now) return this.#close();
    const prefix = now[1].toLowerCase();
    this.#shown = commands.filter((c) => c.name.toLowerCase().startsWith(prefix));
    this.#active = 0;
    if (this.#shown.length === 0) return this.#close();
    this.#render();
  }

  #render(): void {
    this.node.replaceChildren(
      ...this.#shown.map((c, i) => {
        const option = el(
          "li",
          { class: "command-option", attrs: { id: `command-option-${c.name}`, role: "option", "aria-selected": String(i === this.#active) } },
          el("span", { class: "command-name", text: `/${c.name}` }),
          ...(c.argumentHint ? [el("span", { class: "command-hint", text: c.argumentHint })] : []),
          ...(c.description ? [el("span", { class: "command-description", text: c.description })] : []),
        );
        // mousedown, not click: the message box keeps the focus.
        option.addEventListener("mousedown", (event) => {
          event.preventDefault();
          this.#choose(c);
        });
        return option;
      }),
    );
    this.node.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.input.setAttribute("aria-activedescendant", `command-option-${this.#shown[this.#active].name}`);
    this.node.children[this.#active]?.scrollIntoView({ block: "nearest" });
  }

  #choose(command: CommandInfo | undefined): void {
    if (command) this.input.value = `/${command.name} `;
    this.#close();
    this.input.focus();
  }

  #close(): void {
    this.node.hidden = true;
    this.node.replaceChildren();
    this.#shown = [];
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }
}
