/**
 * A unified diff (what write_file and edit_file report on their tool call
 * record) shown as one collapsible section per file: a header with the path
 * and the count of added and removed lines, then the lines coloured by kind.
 *
 * Parsing follows each hunk's line counts (`@@ -a,b +c,d @@`), so a removed
 * line that itself starts with "--" is never taken for the next file's
 * header. Lines outside any file (the server's "[no diff: …]" and
 * "[… diff cut …]" notes) are kept as notes.
 */
import { el } from "./dom.js";

export type DiffLineKind = "add" | "del" | "context" | "hunk" | "meta" | "note";

export interface DiffFile {
  /** The path as the headers name it, without the a/ b/ prefix; the new path unless the file was removed. */
  path: string;
  status: "added" | "removed" | "modified";
  added: number;
  removed: number;
  lines: Array<{ kind: DiffLineKind; text: string }>;
}

export interface ParsedDiff {
  files: DiffFile[];
  /** Text outside any file's section. */
  notes: string[];
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

const stripPrefix = (path: string) => path.replace(/^[ab]\//, "").replace(/\t.*$/, "");

export function parseUnifiedDiff(text: string): ParsedDiff {
  const files: DiffFile[] = [];
  const notes: string[] = [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let file: DiffFile | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  /** A file opened by `diff --git` whose ---/+++ headers have not come yet (they name the same file). */
  let gitFile: DiffFile | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    // Inside a hunk the counts say which lines belong to it; a line of no hunk kind (the server's
    // "[… diff cut …]" note after a cut hunk) ends it early.
    if (file && (oldLeft > 0 || newLeft > 0) && !/^[ +\-\\]|^$/.test(line)) oldLeft = newLeft = 0;
    if (file && (oldLeft > 0 || newLeft > 0)) {
      if (line.startsWith("+")) {
        file.lines.push({ kind: "add", text: line });
        file.added++;
        newLeft--;
      } else if (line.startsWith("-")) {
        file.lines.push({ kind: "del", text: line });
        file.removed++;
        oldLeft--;
      } else if (line.startsWith("\\")) {
        file.lines.push({ kind: "meta", text: line }); // "\ No newline at end of file"
      } else {
        file.lines.push({ kind: "context", text: line });
        oldLeft--;
        newLeft--;
      }
      continue;
    }
    if (line.startsWith("diff --git ")) {
      file = gitFile = { path: stripPrefix(line.split(" ").at(-1) ?? ""), status: "modified", added: 0, removed: 0, lines: [] };
      files.push(file);
      continue;
    }
    if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
      const from = line.slice(4);
      const to = lines[i + 1].slice(4);
      // A `diff --git` line before them already opened this file's section.
      file = gitFile ?? { path: "", status: "modified", added: 0, removed: 0, lines: [] };
      if (!gitFile) files.push(file);
      gitFile = undefined;
      file.status = from === "/dev/null" ? "added" : to === "/dev/null" ? "removed" : "modified";
      file.path = stripPrefix(to === "/dev/null" ? from : to);
      i++;
      continue;
    }
    const hunk = HUNK.exec(line);
    if (file && hunk) {
      gitFile = undefined;
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      file.lines.push({ kind: "hunk", text: line });
      continue;
    }
    if (file && /^(\\ |index |new file mode|deleted file mode|old mode|new mode|similarity|rename |Binary files)/.test(line)) {
      file.lines.push({ kind: "meta", text: line });
      continue;
    }
    if (line.trim()) notes.push(line);
  }
  return { files, notes };
}

/** The diff as DOM: one open <details> per file, its lines in a <pre>. */
export function renderDiff(text: string): HTMLElement {
  const { files, notes } = parseUnifiedDiff(text);
  const node = el("div", { class: "diff" });
  for (const file of files) {
    const stats = el(
      "span",
      { class: "diff-stats" },
      el("span", { class: "diff-added", text: `+${file.added}` }),
      el("span", { class: "diff-removed", text: `−${file.removed}` }),
    );
    const summary = el(
      "summary",
      { class: "diff-header" },
      el("span", { class: "diff-path", text: file.path, title: file.path }),
      ...(file.status === "modified" ? [] : [el("span", { class: `diff-status ${file.status}`, text: file.status === "added" ? "new" : "deleted" })]),
      stats,
    );
    const body = el("pre", { class: "diff-body" });
    for (const line of file.lines) body.append(el("span", { class: `diff-line diff-${line.kind}`, text: `${line.text}\n` }));
    const details = el("details", { class: "diff-file", attrs: { "data-path": file.path } }, summary, body);
    details.open = true;
    node.append(details);
  }
  for (const note of notes) node.append(el("div", { class: "diff-note", text: note }));
  return node;
}

/** One file's change as the server reports it (tool_pending.changes, generation_diff_updated). */
export interface FileChange {
  path: string;
  kind: "add" | "modify" | "delete";
  diff: string;
  /** The call, as proposed, would fail instead of changing the file. */
  problem?: string;
}

/**
 * A list of file changes: each file's diff as renderDiff shows it, and a
 * warning in place of the diff for an entry whose call would fail.
 */
export function renderChanges(changes: readonly FileChange[]): HTMLElement {
  const node = el("div", { class: "diff" });
  if (changes.length === 0) node.append(el("div", { class: "diff-note", text: "No file would change." }));
  for (const change of changes) {
    if (change.problem !== undefined) {
      node.append(
        el(
          "div",
          { class: "change-problem", attrs: { "data-path": change.path } },
          el("strong", { text: "Will fail: " }),
          el("span", { class: "change-problem-path", text: change.path }),
          document.createTextNode(` — ${change.problem}`),
        ),
      );
      continue;
    }
    node.append(...Array.from(renderDiff(change.diff).childNodes));
  }
  return node;
}

/** Lines added and removed over a list of changes. */
export function changeStats(changes: readonly FileChange[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const change of changes) {
    for (const file of parseUnifiedDiff(change.diff).files) {
      added += file.added;
      removed += file.removed;
    }
  }
  return { added, removed };
}
