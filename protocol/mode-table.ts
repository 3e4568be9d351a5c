/**
 * The built-in modes and the table a server runs with (built-ins with the
 * configuration's changes, then its own modes). Plain data and functions, no
 * zod: the server builds the table at start. The schemas of modes (what the
 * configuration and modes.list hold) are in modes.ts.
 */
import type { Mode, ModeDefinitionInput } from "./modes.js";

/** The mode of a conversation whose settings name none. */
export const DEFAULT_MODE = "code";

/**
 * The built-in modes: the one place they are defined. `code` is the
 * default and changes nothing (a conversation in it behaves as one without
 * a mode).
 */
export const BUILT_IN_MODES: Readonly<Record<string, ModeDefinitionInput>> = {
  ask: {
    name: "Ask",
    description: "Answer questions about the workspace without changing anything: read-only tools only.",
    prompt:
      "You are in ask mode: answer the user's questions. Look with your read-only tools, but change nothing — no file writes, no commands, no plan. If a change is needed, describe it and say that the user can switch to code mode to make it.",
    approval: "auto-read-only",
    tools: "read-only",
    deny: ["update_plan"],
  },
  plan: {
    name: "Plan",
    description: "Explore with read-only tools and propose a plan (update_plan); nothing is changed until the user approves.",
    prompt:
      "You are in plan mode: do not change anything. Explore with your read-only tools, then propose a plan of concrete steps with update_plan and explain it briefly. Stop there and wait for the user to approve or amend it; they switch to code mode to carry it out.",
    approval: "auto-read-only",
    tools: "read-only",
    allow: ["update_plan"],
  },
  code: {
    name: "Code",
    description: "The default: every tool, approval as the conversation's settings say.",
  },
  auto: {
    name: "Auto",
    description: "Every tool, and every tool call runs without asking (approval auto); settings.toolPolicy still applies.",
    approval: "auto",
  },
};

/**
 * The modes a server runs with: the built-in ones with the configuration's
 * changes, then the configuration's own, in that order. Pure; the server
 * builds it once at start.
 */
export function modeTable(configured: Readonly<Record<string, ModeDefinitionInput>> = {}): Mode[] {
  const names = [...Object.keys(BUILT_IN_MODES), ...Object.keys(configured).filter((n) => !Object.hasOwn(BUILT_IN_MODES, n))];
  return names.map((id) => {
    const builtIn = Object.hasOwn(BUILT_IN_MODES, id);
    const d = { ...(builtIn ? BUILT_IN_MODES[id] : {}), ...(Object.hasOwn(configured, id) ? configured[id] : {}) };
    return {
      id,
      name: d.name ?? id.charAt(0).toUpperCase() + id.slice(1),
      description: d.description ?? "",
      prompt: d.prompt ?? "",
      approval: d.approval ?? null,
      tools: d.tools ?? "all",
      allow: [...(d.allow ?? [])],
      deny: [...(d.deny ?? [])],
      model: d.model ?? null,
      reasoning: d.reasoning ?? null,
      builtIn,
    };
  });
}

/** The message of an unknown mode name: it lists the valid ones. */
export function unknownModeMessage(name: string, modes: readonly Pick<Mode, "id">[]): string {
  return `unknown mode "${name}" (valid: ${modes.map((m) => m.id).join(", ")}; see modes.list)`;
}
