/**
 * The shell tool hands its process group back (trackProcessGroup's release)
 * after its result, not before: the release asks whether anything of the
 * group still lives — kill(-pgid, 0), a thrown ESRCH once it is gone — and
 * tells the reaper to forget it, work the result does not depend on. It
 * still happens, right after.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it, vi } from "vitest";
import { createShellTool } from "../../src/tools/shell.js";

const workDir = realpathSync(mkdtempSync(join(tmpdir(), "agentwire-shell-release-")));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

it("checks the command's process group only once the result is out", async () => {
  const kill = vi.spyOn(process, "kill");
  try {
    const result = await createShellTool().run(
      { command: "echo $$" },
      { cwd: workDir, conversationId: "c_test", signal: new AbortController().signal, timeoutMs: 10_000, onOutput: () => {} },
    );
    expect(result.success).toBe(true);
    const probes = () => kill.mock.calls.filter(([pid, signal]) => pid === -Number(result.output.trim()) && signal === 0);
    expect(probes()).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(probes()).toHaveLength(1);
  } finally {
    kill.mockRestore();
  }
});
