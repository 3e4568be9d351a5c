/**
 * Gathers what the system prompt template needs for one model call: the
 * date and OS now, the tools offered now, and (only when the template uses
 * `{{skills}}`) the skills found for the conversation's workspace.
 */
import { platform, release } from "node:os";
import { discoverSkills } from "../skills/discover-skills.js";
import type { PromptValues, SystemPromptTemplate } from "./system-prompt.js";

export async function gatherPromptValues(
  template: SystemPromptTemplate,
  workspace: string,
  tools: readonly string[],
  signal?: AbortSignal,
): Promise<PromptValues> {
  const skills = template.uses.has("skills") ? (await discoverSkills({ workspace, signal })).skills : [];
  return {
    workspace,
    date: new Date().toISOString().slice(0, 10),
    os: `${platform()} ${release()}`,
    tools,
    skills: skills.map(({ name, description }) => ({ name, description })),
  };
}
