/**
 * The workspace's remembered approvals: `.agentwire/approvals.json` in the
 * workspace (tool.confirm remember "workspace"), honoured by every
 * conversation on that workspace. Read and written through the same
 * workspace-confined helpers as the file tools, so a symlink cannot point
 * them outside. The file is the user's too (they may edit or delete it): a
 * malformed one is reported and ignored, never fatal, and never overwritten.
 *
 * Trust: a workspace may come from someone else (a cloned repository could
 * bring a file approving its own scripts), so the file is honoured only as
 * agentwire wrote it: each write records the file's SHA-256 in the user's
 * trust list (the one `agentwire trust` keeps, beside nothing a project can
 * write), and a file whose content is not the one recorded is ignored.
 */
import { createHash } from "node:crypto";
import type { ApprovalRule } from "../../protocol/conversation-settings.js";
import { MAX_APPROVAL_RULES } from "../../protocol/settings-defaults.js";
import { FileToolError } from "../tools/files/file-tool-error.js";
import { putWorkspaceText, readWorkspaceText } from "../tools/files/restore-file.js";
import { resolveInWorkspace } from "../tools/files/workspace-path.js";
import { TrustStore, trustStorePath } from "../config/trust-store.js";
import { sameRule } from "../tools/approval-rules.js";

/** Where the rules live, relative to the workspace. */
export const APPROVALS_FILE = ".agentwire/approvals.json";

/** Largest approvals file read (200 rules of the longest prefix fit well within it). */
export const MAX_APPROVALS_FILE_BYTES = 64 * 1024;

/** The file's rules ([] when there is none); `problem` says why a file that is there was not used. */
export interface WorkspaceApprovals {
  rules: ApprovalRule[];
  problem?: string;
}

const FILE_OPTIONS = { allowHardLinks: false };

export async function readWorkspaceApprovals(workspace: string, signal: AbortSignal = new AbortController().signal): Promise<WorkspaceApprovals> {
  let text: string | null | undefined;
  try {
    text = await readWorkspaceText(workspace, APPROVALS_FILE, FILE_OPTIONS, signal);
  } catch (error) {
    if (error instanceof FileToolError) return { rules: [], problem: error.message };
    throw error;
  }
  if (text === null) return { rules: [] };
  if (text === undefined) return { rules: [], problem: "it is not a readable text file" };
  if (Buffer.byteLength(text) > MAX_APPROVALS_FILE_BYTES) return { rules: [], problem: `it is larger than ${MAX_APPROVALS_FILE_BYTES} bytes` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { rules: [], problem: `it is not valid JSON (${(error as Error).message})` };
  }
  // The file's schema is built when a workspace first has one.
  const { ApprovalsFile } = await import("./workspace-approvals-schema.js");
  const parsed = ApprovalsFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join(".") : "the file";
    return { rules: [], problem: `${where}: ${issue.message} (expected { "rules": [{ "tool": "shell", "prefix": "git status" }, …] }, at most ${MAX_APPROVAL_RULES} rules)` };
  }
  // After the shape, so a file broken by hand is told as such.
  const untrusted = await trustProblem(workspace, text);
  if (untrusted) return { rules: [], problem: untrusted };
  return { rules: parsed.data.rules };
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The user's trust list, read afresh (`agentwire trust --revoke` applies at once). */
function trustStore(): TrustStore {
  return TrustStore.load(trustStorePath(process.env));
}

/** Why the file's content is not to be honoured; undefined when it is as agentwire last wrote it. */
async function trustProblem(workspace: string, text: string): Promise<string | undefined> {
  try {
    const { real } = await resolveInWorkspace(workspace, APPROVALS_FILE);
    if (trustStore().verdict(real, sha256(text)) === "trusted") return undefined;
  } catch (error) {
    return `its trust could not be checked (${(error as Error).message})`;
  }
  return "it is not as agentwire wrote it (edited by hand, or brought by someone else, e.g. in a cloned repository), so its rules are not trusted; remove it and remember the approvals again";
}

/** One write at a time per workspace: two conversations remembering at once must both land. */
const writing = new Map<string, Promise<unknown>>();

/**
 * Add a rule to the file (creating it, and .agentwire/, when missing); a rule
 * already there is not added twice. Throws an Error saying why when the file
 * is malformed (it is left as it is), full, or cannot be written.
 */
export function addWorkspaceApproval(workspace: string, rule: ApprovalRule): Promise<void> {
  const previous = writing.get(workspace) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(async () => {
    const current = await readWorkspaceApprovals(workspace);
    if (current.problem) throw new Error(`${APPROVALS_FILE} is not usable, so it was left as it is: ${current.problem}`);
    if (current.rules.some((r) => sameRule(r, rule))) return;
    if (current.rules.length >= MAX_APPROVAL_RULES) throw new Error(`${APPROVALS_FILE} already holds ${MAX_APPROVAL_RULES} rules, the most it may`);
    const text = `${JSON.stringify({ rules: [...current.rules, rule] }, null, 2)}\n`;
    try {
      await putWorkspaceText(workspace, APPROVALS_FILE, text, FILE_OPTIONS, new AbortController().signal);
    } catch (error) {
      if (error instanceof FileToolError) throw new Error(`${APPROVALS_FILE} could not be written: ${error.message}`);
      throw error;
    }
    try {
      const { real } = await resolveInWorkspace(workspace, APPROVALS_FILE);
      trustStore().trust(real, sha256(text));
    } catch (error) {
      throw new Error(`${APPROVALS_FILE} was written, but could not be recorded as trusted, so it will be ignored (${(error as Error).message})`);
    }
  });
  writing.set(workspace, next);
  void next.finally(() => {
    if (writing.get(workspace) === next) writing.delete(workspace);
  }).catch(() => undefined);
  return next;
}
