/**
 * The agent's plan as `agentwire chat` prints it on stderr when
 * plan_updated arrives: a checklist, [ ] pending, [~] in progress,
 * [x] completed.
 */
import type { PlanUpdatedNotification } from "../../clients/typescript/index.js";
import { type Palette, printable } from "./render.js";

type Entry = PlanUpdatedNotification["entries"][number];

const BOX: Record<Entry["status"], string> = { pending: "[ ]", in_progress: "[~]", completed: "[x]" };

export function planLines(entries: readonly Entry[], colors: Palette): string[] {
  if (entries.length === 0) return [colors.bold("Plan cleared.")];
  return [
    colors.bold("Plan:"),
    ...entries.map((entry) => {
      const line = `  ${BOX[entry.status]} ${printable(entry.content)}`;
      return entry.status === "completed" ? colors.dim(line) : entry.status === "in_progress" ? colors.bold(line) : line;
    }),
  ];
}
