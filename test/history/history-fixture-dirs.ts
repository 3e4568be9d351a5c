/**
 * A private copy of test/fixtures/history for one test file: Codex's home
 * and Claude Code's projects folder, which a test may write into (the
 * watcher tests) without touching the repository.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURES = fileURLToPath(new URL("../fixtures/history", import.meta.url));
export const CODEX_SESSION = "codex:0199a1b2-7c3d-7e4f-8a90-b1c2d3e4f501";
export const CLAUDE_SESSION = "claude:5c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6";

export interface HistoryDirs {
  codexHome: string;
  claudeProjects: string;
  remove(): void;
}

export function copyHistoryFixtures(): HistoryDirs {
  const root = mkdtempSync(join(tmpdir(), "agentwire-history-"));
  cpSync(FIXTURES, root, { recursive: true });
  return {
    codexHome: join(root, "codex"),
    claudeProjects: join(root, "claude", "projects"),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
