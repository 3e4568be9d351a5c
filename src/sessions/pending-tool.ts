import type { FileChange, PendingTool, ToolCallDisplay, ToolCallRecord } from "../../protocol/index.js";
import { ruleFor } from "../tools/approval-rules.js";
import { toolDisplay } from "../tools/tool-display.js";

/**
 * The display a tool call record carries: kind, title and locations are
 * computed once, when the loop stores the call (from its tool and the
 * proposed arguments), and kept on the record, so whoever shows a pending
 * call — the running generation, or the runtime after a restart — needs no
 * tool registry. Undefined for a record stored before records kept it.
 */
export function storedDisplay(record: ToolCallRecord): ToolCallDisplay | undefined {
  const { kind, title, locations } = record;
  return kind !== undefined && title !== undefined && locations !== undefined ? { kind, title, locations } : undefined;
}

/**
 * A pending call as state.pendingTools shows it: as its tool_pending did,
 * with the rule it would be remembered as and the change it would make when known. A record without a display
 * (stored by an older server, not offered again yet) shows as its tool's
 * name, kind other: the state never guesses more than that.
 */
export function pendingToolOf(record: ToolCallRecord, changes?: FileChange[]): PendingTool {
  const { toolCallId, toolName, arguments: args } = record;
  const display = storedDisplay(record) ?? { ...toolDisplay({ name: toolName }), locations: [] };
  const rememberAs = ruleFor(toolName, args);
  return { toolCallId, toolName, arguments: args, ...display, ...(rememberAs ? { rememberAs } : {}), ...(changes ? { changes } : {}) };
}
