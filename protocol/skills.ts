import * as z from "zod";
import { ConversationId } from "./records.js";

export const SkillsListParams = z
  .strictObject({
    conversationId: ConversationId.optional().describe(
      "Look in this conversation's workspace. Absent: the server's working directory.",
    ),
  })
  .describe("Parameters of skills.list.");

export const Skill = z
  .object({
    name: z.string().describe("The skill's name (front matter `name`): what the model passes to load_skill."),
    description: z.string().describe("When to use it (front matter `description`), as the system prompt lists it."),
    path: z.string().describe("Absolute path of its SKILL.md."),
    source: z
      .enum(["workspace", "user"])
      .describe(
        "workspace: <workspace>/.agentwire/skills/; user: $XDG_CONFIG_HOME/agentwire/skills/ (or ~/.config/agentwire/skills/). A workspace skill hides a user skill of the same name.",
      ),
  })
  .describe("A skill: a folder with a SKILL.md whose front matter names and describes it.");

export const SkillProblem = z
  .object({
    path: z.string().describe("The SKILL.md (or skills directory) concerned."),
    message: z.string().describe("What is wrong, e.g. no front matter, no name or description, unreadable, too large."),
  })
  .describe("A skill that could not be used; the others still are.");

export const SkillsListResult = z
  .object({
    skills: z.array(Skill).describe("Usable skills, by name."),
    problems: z.array(SkillProblem).describe("Skill folders that were skipped, and why. Empty when all is well."),
  })
  .describe("Result of skills.list.");

export type Skill = z.infer<typeof Skill>;
export type SkillsListResult = z.infer<typeof SkillsListResult>;
