/**
 * `load_skill`: the model reads a skill's SKILL.md by name. The system
 * prompt lists the skills (`{{skills}}`); this tool hands over the full
 * instructions only when the model decides it needs them, so a long skill
 * costs context only when used. Skills are looked up afresh in the calling
 * conversation's workspace (`context.cwd`) and the user's config dir.
 */
import type { Tool, ToolResult } from "../tools/tool.js";
import { builtinParameters } from "../tools/tool-parameters.js";
import type { LoadSkillArguments } from "./load-skill-arguments.js";
import { discoverSkills, readSkillText, SKILL_NAME } from "./discover-skills.js";

/** The name of the tool that reads a skill; `{{skills}}` in the system prompt tells the model to call it when it is offered. */
export const LOAD_SKILL_TOOL = "load_skill";


export interface LoadSkillToolOptions {
  /** Where the user's skills are found (XDG_CONFIG_HOME); default process.env, read at each call. */
  env?: NodeJS.ProcessEnv;
  home?: string;
}

export function createLoadSkillTool(options: LoadSkillToolOptions = {}): Tool<LoadSkillArguments> {
  return {
    name: LOAD_SKILL_TOOL,
    description:
      "Read a skill's instructions (its SKILL.md) by name. The skills available are listed in the system prompt; load one when the task matches its description, then follow it.",
    parameters: builtinParameters("load_skill", async () => (await import("./load-skill-arguments.js")).LoadSkillArguments),
    annotations: { readOnlyHint: true, destructiveHint: false },
    source: "builtin",
    kind: "read",
    title: "Load skill",
    describeCall: (args) => (typeof args.name === "string" && args.name ? { title: `Load skill ${args.name}` } : {}),
    async run(args, context): Promise<ToolResult> {
      // Interrupt and the time limit both end the lookup: reads take the combined signal.
      const signal = AbortSignal.any([context.signal, AbortSignal.timeout(context.timeoutMs)]);
      try {
        const found = await discoverSkills({ workspace: context.cwd, env: options.env ?? process.env, home: options.home, signal });
        const skill = SKILL_NAME.test(args.name) ? found.skills.find((s) => s.name === args.name) : undefined;
        if (!skill) {
          const names = found.skills.map((s) => s.name).join(", ");
          return { success: false, output: `No skill named "${args.name}". Available skills: ${names || "none"}.` };
        }
        return { success: true, output: await readSkillText(skill, context.cwd, signal) };
      } catch (error) {
        if (context.signal.aborted) return { success: false, output: "Interrupted." };
        if (signal.aborted) return { success: false, output: `Timed out after ${context.timeoutMs} ms reading the skill.` };
        return { success: false, output: `Could not read the skill: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
      }
    },
  };
}
