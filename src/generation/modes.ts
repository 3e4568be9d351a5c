/**
 * What a conversation's mode (settings.mode; protocol/modes.ts) does to a
 * model call: which tools it offers, which approval policy applies, what
 * joins the system prompt. The loop reads the mode at every model call, so
 * a switch applies from the next one.
 */
import type { ConversationSettings, Mode, ModesConfig } from "../../protocol/index.js";
import { DEFAULT_MODE, modeTable, unknownModeMessage } from "../../protocol/mode-table.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { ToolAnnotations } from "../tools/tool.js";
import type { ApprovalSettings } from "./approval-policy.js";

/** The server's modes (built-in ones as the configuration changed them, then its own), built once at start. */
export class ModeSet {
  readonly list: readonly Mode[];
  private readonly byId: ReadonlyMap<string, Mode>;

  constructor(configured?: ModesConfig) {
    this.list = modeTable(configured);
    this.byId = new Map(this.list.map((m) => [m.id, m]));
  }

  get(id: string): Mode | undefined {
    return this.byId.get(id);
  }

  /**
   * The mode a conversation is in. A stored name the server no longer has
   * (a mode removed from the configuration since) counts as the default,
   * which changes nothing: the conversation behaves as it did before modes.
   */
  of(settings: Pick<ConversationSettings, "mode">): Mode {
    return (settings.mode !== undefined ? this.byId.get(settings.mode) : undefined) ?? this.byId.get(DEFAULT_MODE)!;
  }

  /** A -32602 naming `field` when `name` is not one of the server's modes. */
  check(name: string | undefined, field: string): void {
    if (name !== undefined && !this.byId.has(name)) throw RpcError.invalidParam(field, unknownModeMessage(name, this.list));
  }
}

/** An exact name, or a `prefix*` the name starts with. */
function listed(names: readonly string[], toolName: string): boolean {
  return names.some((n) => (n.endsWith("*") ? toolName.startsWith(n.slice(0, -1)) : n === toolName));
}

/**
 * True when the mode offers the tool: `deny` first, then `allow`, then
 * `tools` (read-only: only an explicit readOnlyHint counts, as for approval
 * auto-read-only — a tool that says nothing may change anything).
 */
export function modeOffers(mode: Mode, tool: { name: string; annotations?: ToolAnnotations } | undefined, name: string): boolean {
  if (listed(mode.deny, name)) return false;
  if (listed(mode.allow, name)) return true;
  return mode.tools === "all" || tool?.annotations?.readOnlyHint === true;
}

/** What the model is told when it calls a tool its mode does not offer. */
export function notInModeText(name: string, mode: Mode): string {
  return `Tool "${name}" is not available in ${mode.id} mode (settings.mode); it was not run. Do not call it again; the user can switch modes to allow it.`;
}

/** The settings approval-policy.ts reads, with the mode's approval in place of settings.approval. */
export function approvalSettingsIn<S extends ApprovalSettings>(settings: S, mode: Mode): S {
  return mode.approval === null ? settings : { ...settings, approval: mode.approval };
}

/** The system prompt with the mode's addendum after a blank line (the prompt alone when there was none). */
export function withModePrompt(system: string, mode: Mode): string {
  if (mode.prompt === "") return system;
  return system === "" ? mode.prompt : `${system}\n\n${mode.prompt}`;
}
