/**
 * Steps starting together in one workspace share one skill discovery
 * (issue 27: a fan-out's step starts each read the skill folders), and a
 * step after it has finished sees the folders as they are then.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gatherPromptValues, skillDiscoveriesUnderway } from "../../src/context/prompt-values.js";
import { compileSystemPrompt } from "../../src/context/system-prompt.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function addSkill(workspace: string, name: string): Promise<void> {
  const dir = join(workspace, ".agentwire", "skills", name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: The ${name} skill.\n---\nDo it.\n`);
}

describe("skills of the system prompt", () => {
  const template = compileSystemPrompt("{{skills}}");

  it("concurrent calls share one discovery; a later call sees a skill added since", async () => {
    const workspace = await mkdtemp(join(tmpdir(), "agentwire-prompt-values-"));
    dirs.push(workspace);
    await addSkill(workspace, "first");
    const together = Array.from({ length: 20 }, () => gatherPromptValues(template, workspace, []));
    // Twenty calls waiting, one discovery reading the folders.
    expect(skillDiscoveriesUnderway()).toBe(1);
    const values = await Promise.all(together);
    for (const v of values) expect(v.skills.map((s) => s.name)).toEqual(["first"]);
    expect(skillDiscoveriesUnderway()).toBe(0);

    await addSkill(workspace, "second");
    const later = await gatherPromptValues(template, workspace, []);
    expect(later.skills.map((s) => s.name)).toEqual(expect.arrayContaining(["first", "second"]));
    expect(await readdir(join(workspace, ".agentwire", "skills"))).toHaveLength(2);
  });

  it("a caller whose signal aborts stops waiting; the others still get the skills", async () => {
    const workspace = await mkdtemp(join(tmpdir(), "agentwire-prompt-values-"));
    dirs.push(workspace);
    await addSkill(workspace, "only");
    const controller = new AbortController();
    const aborted = gatherPromptValues(template, workspace, [], controller.signal);
    const other = gatherPromptValues(template, workspace, []);
    controller.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    expect((await other).skills.map((s) => s.name)).toEqual(["only"]);
  });
});
