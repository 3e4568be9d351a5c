/**
 * The `history` section of agentwire.json: where the histories of other
 * agent runtimes are looked for (history.sources, history.list,
 * history.importSession) and the bounds of their index.
 */
import * as z from "zod";
import type {} from "./config-meta.js";

const MiB = 1024 * 1024;

export const HistorySection = z
  .strictObject({
    enabled: z.boolean().default(true).describe("Index the histories of Codex and Claude Code (read-only, at the first history.* call). false: the lists are empty."),
    codexHome: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe("Codex's home folder; its rollouts are read from <codexHome>/sessions.")
      .meta({ defaultText: "$CODEX_HOME, else ~/.codex" }),
    claudeProjects: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe("Claude Code's projects folder (one folder per working directory, one .jsonl per session).")
      .meta({ defaultText: "$CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects" }),
    maxSessions: z.number().int().min(1).max(1_000_000).default(5000).describe("Most sessions indexed; the most recently changed files are kept, the others reported in history.sources."),
    maxFileBytes: z.number().int().min(1).default(64 * MiB).describe("A session file larger than this is not read (reported in history.sources)."),
    maxLineBytes: z.number().int().min(1).default(8 * MiB).describe("A line longer than this is skipped and reported as damaged."),
  })
  .describe("Indexed histories of other agent runtimes (Codex, Claude Code).");
