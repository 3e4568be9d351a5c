/**
 * list_files: what a directory holds, recursively, or the files matching a
 * glob — as git sees the tree (.gitignore respected, .git/ skipped).
 */
import { stat } from "node:fs/promises";
import type Picomatch from "picomatch";
import { importCommonJs } from "../../lazy-commonjs.js";
import type { Tool } from "../tool.js";
import { builtinParameters } from "../tool-parameters.js";
import type { ListFilesArguments } from "./file-tool-arguments.js";
import { FileToolError, rethrowFsError } from "./file-tool-error.js";
import { runFileTool } from "./file-tool-run.js";
import { walkWorkspace } from "./workspace-walk.js";
import { resolveInWorkspace, workspaceRoot } from "./workspace-path.js";
import { pathCall } from "../tool-display.js";

/** Most entries one call returns. */
export const LIST_MAX_ENTRIES = 1000;

export function createListFilesTool(): Tool<ListFilesArguments> {
  return {
    name: "list_files",
    description:
      "List the files under a directory of the workspace, recursively, one workspace-relative path per line " +
      "(directories end with `/`), or only the files matching a glob. Files ignored by .gitignore and the .git " +
      `directory are left out; symlinks are listed but not followed. At most ${LIST_MAX_ENTRIES} entries; narrow a larger listing with path or glob.`,
    parameters: builtinParameters("list_files", async () => (await import("./file-tool-arguments.js")).ListFilesArguments),
    annotations: { readOnlyHint: true, destructiveHint: false },
    source: "builtin",
    kind: "read",
    title: "List files",
    describeCall: (args, cwd) => pathCall("List", args, cwd, { fallback: "." }),
    run: (args, context) =>
      runFileTool(context, { readOnly: true }, async (signal) => {
        const root = await workspaceRoot(context.cwd);
        const start = await resolveInWorkspace(context.cwd, args.path ?? ".");
        if (!start.exists) throw new FileToolError(`"${start.display}" does not exist`);
        const info = await stat(start.real).catch((error: unknown) => rethrowFsError(error, start.display));
        if (!info.isDirectory()) throw new FileToolError(`"${start.display}" is not a directory; use read_file to read a file`);
        // picomatch (~35 KB) is loaded by the first call with a glob, not with the server.
        const matches = args.glob === undefined ? null : ((await importCommonJs(import("picomatch"))) as unknown as typeof Picomatch)(args.glob, { dot: true });
        const listed: string[] = [];
        let more = false;
        for await (const entry of walkWorkspace(root, start.real, signal)) {
          if (matches !== null && (entry.kind === "dir" || !matches(entry.fromStart))) continue;
          if (listed.length === LIST_MAX_ENTRIES) {
            more = true;
            break;
          }
          listed.push(entry.kind === "dir" ? `${entry.display}/` : entry.display);
        }
        if (listed.length === 0) {
          const what = args.glob === undefined ? `${start.display} is empty (or holds only ignored files)` : `no files under ${start.display} match ${args.glob}`;
          return { success: true, output: `[${what}]` };
        }
        if (more) listed.push(`[listing stopped at ${LIST_MAX_ENTRIES} entries; list a subdirectory or use a glob to see the rest]`);
        return { success: true, output: listed.join("\n") };
      }),
  };
}
