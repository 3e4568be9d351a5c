/**
 * The skills `{{skills}}` names are kept between model calls (issue 27:
 * each call read the skills folders before its request could leave) while
 * file watches say nothing changed; any change on disk is read by the very
 * next call, and where watching cannot be trusted every call reads.
 */
import { watch, type FSWatcher } from "node:fs";
import { mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { discoverSkills } from "../../src/skills/discover-skills.js";
import { MAX_ASKED_ONCE, MAX_WATCHED_FOLDERS, MAX_WORKSPACES, SkillsCache, type SkillsCacheOptions } from "../../src/skills/skills-cache.js";

const roots: string[] = [];
const caches: SkillsCache[] = [];
afterEach(() => {
  for (const cache of caches.splice(0)) cache.close();
});
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function tempRoot(): Promise<{ workspace: string; xdg: string; env: NodeJS.ProcessEnv }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "agentwire-skills-cache-")));
  roots.push(root);
  const workspace = join(root, "ws");
  await mkdir(workspace);
  const xdg = join(root, "xdg"); // not there yet
  return { workspace, xdg, env: { XDG_CONFIG_HOME: xdg } };
}

async function putSkill(skillsDir: string, folder: string, description = `The ${folder} skill.`): Promise<void> {
  await mkdir(join(skillsDir, folder), { recursive: true });
  await writeFile(join(skillsDir, folder, "SKILL.md"), `---\nname: ${folder}\ndescription: ${description}\n---\nDo it.\n`);
}

/** A cache over real folders, counting the fresh reads its callers made. */
function harness(env: NodeJS.ProcessEnv, options: SkillsCacheOptions = {}) {
  const cache = new SkillsCache({ env, ...options });
  caches.push(cache);
  let reads = 0;
  const read = async (workspace: string) => {
    reads++;
    return (await discoverSkills({ workspace, env })).skills.map(({ name, description }) => ({ name, description }));
  };
  return {
    cache,
    get reads() {
      return reads;
    },
    /** One call as a model call makes it, then the background fill it may start. */
    async skills(workspace: string): Promise<string[]> {
      const found = await cache.get(workspace, () => read(workspace));
      await cache.settled();
      return found.map((s) => `${s.name}: ${s.description}`);
    },
  };
}

describe("skills kept between model calls", () => {
  it("a workspace asked for once sets no watch; from its second call on it is kept, and a call with nothing changed reads no folder", async () => {
    const { workspace, env } = await tempRoot();
    await putSkill(join(workspace, ".agentwire", "skills"), "deploy");
    const h = harness(env);
    // One model call (a one-shot command's): read, and nothing watched that its exit would have to release.
    expect(await h.skills(workspace)).toEqual(["deploy: The deploy skill."]);
    expect(h.reads).toBe(1);
    expect(h.cache.watchCount).toBe(0);
    // Asked again: read again, and kept from then on.
    expect(await h.skills(workspace)).toEqual(["deploy: The deploy skill."]);
    expect(h.reads).toBe(2);
    expect(h.cache.watchCount).toBeGreaterThan(0);
    expect(await h.skills(workspace)).toEqual(["deploy: The deploy skill."]);
    expect(await h.skills(workspace)).toEqual(["deploy: The deploy skill."]);
    expect(h.reads).toBe(2);
  });

  it("the next call after a change on disk sees it: added, edited, emptied, removed, moved away, in either directory", async () => {
    const { workspace, xdg, env } = await tempRoot();
    const own = join(workspace, ".agentwire", "skills");
    const user = join(xdg, "agentwire", "skills");
    const h = harness(env);
    const kept = async (expected: string[]) => {
      // Asked twice: the first call reads what changed, the second is served from the cache again.
      const readsBefore = h.reads;
      expect(await h.skills(workspace)).toEqual(expected);
      expect(await h.skills(workspace)).toEqual(expected);
      expect(h.reads).toBe(readsBefore + 1);
    };
    // Asked twice: kept from here on.
    expect(await h.skills(workspace)).toEqual([]);
    expect(await h.skills(workspace)).toEqual([]);

    // Neither .agentwire nor the user's config directory exists yet.
    await putSkill(own, "alpha");
    await kept(["alpha: The alpha skill."]);
    await putSkill(user, "zeta");
    await kept(["alpha: The alpha skill.", "zeta: The zeta skill."]);

    await writeFile(join(own, "alpha", "SKILL.md"), "---\nname: alpha\ndescription: Edited.\n---\n");
    await kept(["alpha: Edited.", "zeta: The zeta skill."]);

    // A folder that holds no SKILL.md yet, then gets one.
    await mkdir(join(own, "beta"));
    await kept(["alpha: Edited.", "zeta: The zeta skill."]);
    await writeFile(join(own, "beta", "SKILL.md"), "---\nname: beta\ndescription: Late.\n---\n");
    await kept(["alpha: Edited.", "beta: Late.", "zeta: The zeta skill."]);

    await rm(join(own, "beta"), { recursive: true });
    await kept(["alpha: Edited.", "zeta: The zeta skill."]);
    await rm(join(user, "zeta", "SKILL.md"));
    await kept(["alpha: Edited."]);

    // The whole .agentwire directory renamed: the skills directory still exists, elsewhere.
    await rename(join(workspace, ".agentwire"), join(workspace, "old-agentwire"));
    await kept([]);
  });

  it("XDG_CONFIG_HOME changed while the process runs: the next call reads the user directory it names now", async () => {
    const { workspace, xdg, env } = await tempRoot();
    await putSkill(join(xdg, "agentwire", "skills"), "first");
    const other = join(xdg, "..", "xdg2");
    await putSkill(join(other, "agentwire", "skills"), "second");
    const h = harness(env);
    expect(await h.skills(workspace)).toEqual(["first: The first skill."]);
    expect(await h.skills(workspace)).toEqual(["first: The first skill."]);
    expect(await h.skills(workspace)).toEqual(["first: The first skill."]);
    expect(h.reads).toBe(2);
    // Kept under the directories it was read from: a call after the change does not get it.
    env.XDG_CONFIG_HOME = other;
    expect(await h.skills(workspace)).toEqual(["second: The second skill."]);
    // Without XDG_CONFIG_HOME the user directory is under the home directory, which os.homedir() takes from HOME.
    delete env.XDG_CONFIG_HOME;
    const home = join(xdg, "..", "home");
    await putSkill(join(home, ".config", "agentwire", "skills"), "third");
    const home2 = join(xdg, "..", "home2");
    await putSkill(join(home2, ".config", "agentwire", "skills"), "fourth");
    const before = process.env.HOME;
    process.env.HOME = home;
    try {
      // Three calls: the second fills the cache, the third is answered from it.
      for (let i = 0; i < 3; i++) expect(await h.skills(workspace)).toEqual(["third: The third skill."]);
      process.env.HOME = home2;
      expect(await h.skills(workspace)).toEqual(["fourth: The fourth skill."]);
    } finally {
      process.env.HOME = before;
    }
  });

  it("where a watch cannot be set, every call reads the folders", async () => {
    const { workspace, env } = await tempRoot();
    await putSkill(join(workspace, ".agentwire", "skills"), "deploy");
    const failing = () => {
      throw Object.assign(new Error("ENOSPC: System limit for number of file watchers reached"), { code: "ENOSPC" });
    };
    const h = harness(env, { watch: failing });
    for (let i = 0; i < 3; i++) expect(await h.skills(workspace)).toEqual(["deploy: The deploy skill."]);
    expect(h.reads).toBe(3);
    expect(h.cache.watchCount).toBe(0);
  });

  it("on a filesystem whose changes a watch may not see (NFS, SMB), every call reads the folders", async () => {
    const { workspace, env } = await tempRoot();
    const h = harness(env, { localFilesystem: async () => false });
    for (let i = 0; i < 3; i++) await h.skills(workspace);
    expect(h.reads).toBe(3);
  });

  it("a symlinked SKILL.md (its target's edits are no event of the folder) is read on every call", async () => {
    const { workspace, env } = await tempRoot();
    const own = join(workspace, ".agentwire", "skills");
    await mkdir(join(own, "linked"), { recursive: true });
    await writeFile(join(workspace, "real.md"), "---\nname: linked\ndescription: Linked.\n---\n");
    await symlink(join(workspace, "real.md"), join(own, "linked", "SKILL.md"));
    const h = harness(env);
    for (let i = 0; i < 2; i++) await h.skills(workspace);
    expect(h.reads).toBe(2);
  });

  it(`more than ${MAX_WATCHED_FOLDERS} skill folders are read on every call rather than watched`, async () => {
    const { workspace, env } = await tempRoot();
    const own = join(workspace, ".agentwire", "skills");
    for (let i = 0; i <= MAX_WATCHED_FOLDERS; i++) await mkdir(join(own, `s${i}`), { recursive: true });
    const h = harness(env);
    for (let i = 0; i < 2; i++) await h.skills(workspace);
    expect(h.reads).toBe(2);
    expect(h.cache.watchCount).toBe(0);
  });

  it("remembers a bounded number of workspaces asked for once: past it, the oldest is asked for as if for the first time", async () => {
    const { workspace: first, env } = await tempRoot();
    const h = harness(env);
    await h.skills(first);
    for (let i = 0; i < MAX_ASKED_ONCE; i++) {
      const other = join(first, "..", `once${i}`);
      await mkdir(other);
      await h.skills(other);
    }
    // One more workspace asked for once than are remembered: the first was forgotten, so its second call fills nothing yet.
    await h.skills(first);
    expect(h.cache.watchCount).toBe(0);
    await h.skills(first);
    expect(h.cache.watchCount).toBeGreaterThan(0);
  });

  it(`keeps at most ${MAX_WORKSPACES} workspaces, closing the watches of the one it drops; close() closes the rest`, async () => {
    const open = new Set<FSWatcher>();
    const counting = (path: string, listener: (event: string, filename: string | null) => void) => {
      const watcher = watch(path, { persistent: false }, listener);
      open.add(watcher);
      const close = watcher.close.bind(watcher);
      watcher.close = () => {
        open.delete(watcher);
        close();
      };
      return watcher;
    };
    const { workspace: first, env } = await tempRoot();
    const h = harness(env, { watch: counting });
    const workspaces = [first];
    for (let i = 1; i <= MAX_WORKSPACES; i++) {
      const workspace = join(first, "..", `ws${i}`);
      await mkdir(workspace);
      workspaces.push(workspace);
    }
    // Each asked for twice: the second call fills its entry.
    for (const workspace of workspaces) await h.skills(workspace);
    expect(open.size).toBe(0);
    for (const workspace of workspaces) await h.skills(workspace);
    expect(open.size).toBe(h.cache.watchCount);
    // The first one was dropped: asked again, it is read.
    const reads = h.reads;
    await h.skills(workspaces[1]!);
    expect(h.reads).toBe(reads);
    await h.skills(first);
    expect(h.reads).toBe(reads + 1);
    expect(open.size).toBeGreaterThan(0);
    h.cache.close();
    expect(open.size).toBe(0);
  });
});
