/**
 * Notices (the `notice` notification, and the start-up notices `initialize`
 * lists) as transient messages in one aria-live region: a screen reader reads
 * each as it appears. Each can be dismissed; conversation and server notices
 * go away by themselves after a while (warnings stay longer), start-up ones
 * stay until dismissed (they say what the server left out of its
 * configuration).
 */
import { el, iconButton } from "./dom.js";

export type NoticeLevel = "info" | "warning";

export interface ShownNotice {
  level: NoticeLevel;
  code: string;
  message: string;
}

/** How long a notice stays, by level; null: until dismissed. */
const LIFETIME_MS: Record<NoticeLevel, number> = { info: 10_000, warning: 20_000 };
/** Most notices shown at once: the oldest goes first. */
const MAX_SHOWN = 4;

export class NoticeArea {
  constructor(readonly node: HTMLElement) {}

  show(notice: ShownNotice, options: { sticky?: boolean } = {}): void {
    const item = el(
      "div",
      { class: `toast ${notice.level}`, attrs: { "data-code": notice.code } },
      el("span", { class: "sr-only", text: notice.level === "warning" ? "Warning: " : "Notice: " }),
      el("span", { class: "toast-text", text: notice.message }),
    );
    const dismiss = () => {
      clearTimeout(timer);
      item.remove();
    };
    item.append(iconButton("close", "Dismiss this notice", dismiss, { class: "icon toast-close" }));
    const timer = options.sticky ? undefined : setTimeout(dismiss, LIFETIME_MS[notice.level]);
    this.node.append(item);
    while (this.node.childElementCount > MAX_SHOWN) this.node.firstElementChild!.remove();
  }
}
