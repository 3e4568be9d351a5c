/**
 * Gathers what the system prompt template needs for one model call: the
 * date and OS now, the tools offered now, and (only when the template uses
 * `{{skills}}`) the skills found for the conversation's workspace: kept
 * between calls while nothing changed on disk (skills-cache.ts), else read.
 */
import { platform, release } from "node:os";
import { discoverSkills, type DiscoveredSkills } from "../skills/discover-skills.js";
import { skillsCache } from "../skills/skills-cache.js";
import type { PromptValues, SystemPromptTemplate } from "./system-prompt.js";

export async function gatherPromptValues(
  template: SystemPromptTemplate,
  workspace: string,
  tools: readonly string[],
  signal?: AbortSignal,
): Promise<PromptValues> {
  let skills: readonly { name: string; description: string }[] = [];
  if (template.uses.has("skills")) {
    signal?.throwIfAborted();
    skills = await skillsCache.get(workspace, () => sharedDiscovery(workspace, signal));
  }
  return { workspace, date: new Date().toISOString().slice(0, 10), os: (osText ??= `${platform()} ${release()}`), tools, skills };
}

/** `{{os}}`: the platform and the kernel's release do not change while the process runs (os.release() asks the kernel each call). */
let osText: string | undefined;

/** Discoveries under way, by workspace. */
const discovering = new Map<string, Promise<DiscoveredSkills["skills"]>>();

/** How many skill discoveries are under way (one per workspace at most). */
export function skillDiscoveriesUnderway(): number {
  return discovering.size;
}

/**
 * The skills of `workspace`, from a discovery that is under way for it if
 * there is one (started moments ago), else from a new one: many steps
 * starting together in one workspace (a fan-out, a burst of scripted calls)
 * read its skill folders once instead of once each. The shared discovery
 * is not tied to one caller's signal; each caller stops waiting on its own.
 */
function sharedDiscovery(workspace: string, signal: AbortSignal | undefined): Promise<DiscoveredSkills["skills"]> {
  let discovery = discovering.get(workspace);
  if (!discovery) {
    discovery = discoverSkills({ workspace }).then((found) => found.skills);
    const settled = () => discovering.delete(workspace);
    discovery.then(settled, settled);
    discovering.set(workspace, discovery);
  }
  if (!signal) return discovery;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    discovery.then(
      (skills) => {
        signal.removeEventListener("abort", onAbort);
        resolve(skills);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
