/**
 * The system prompt template: `{{workspace}}`, `{{date}}`, `{{os}}`,
 * `{{tools}}` and `{{skills}}` (protocol/config.ts lists them for the docs,
 * and holds the default template, DEFAULT_SYSTEM_PROMPT_TEMPLATE).
 * Pure: the caller gathers the values (prompt-values.ts) before every model
 * call, so the date and the tool list are those of that call.
 *
 * The template applies only to conversations without a system prompt of
 * their own: a conversation's `system` is the client's text and is sent
 * verbatim — a prompt that talks about `{{…}}` syntax must neither fail nor
 * be rewritten.
 */
import { LOAD_SKILL_TOOL } from "../skills/load-skill-tool.js";
import { UPDATE_PLAN_TOOL } from "../tools/plan/update-plan.js";
import {
  PLACEHOLDER_PATTERN,
  type SystemPromptPlaceholder,
  unknownPlaceholderMessage,
  unknownPlaceholders,
} from "../../protocol/system-prompt-template.js";


export interface SkillSummary {
  name: string;
  description: string;
}

export interface PromptValues {
  workspace: string;
  /** ISO date, YYYY-MM-DD. */
  date: string;
  os: string;
  /** Names of the tools offered to the model on this call, in order. */
  tools: readonly string[];
  skills: readonly SkillSummary[];
}

export class SystemPromptTemplateError extends Error {}

export interface SystemPromptTemplate {
  /** Placeholders the template uses: the caller need not gather the others (skills cost a directory scan). */
  readonly uses: ReadonlySet<SystemPromptPlaceholder>;
  render(values: PromptValues): string;
}

/** Checks a template once (an unknown placeholder throws SystemPromptTemplateError) and returns its renderer. */
export function compileSystemPrompt(template: string): SystemPromptTemplate {
  const unknown = unknownPlaceholders(template);
  if (unknown.length > 0) throw new SystemPromptTemplateError(`conversations.systemPrompt: ${unknownPlaceholderMessage(unknown)}`);
  const uses = new Set<SystemPromptPlaceholder>();
  for (const match of template.matchAll(PLACEHOLDER_PATTERN)) uses.add(match[1] as SystemPromptPlaceholder);
  // The last values rendered and their text: every model call renders the prompt, and calls in a row
  // (the steps of a turn, many conversations of one workspace) nearly always bring the same values.
  let last: { values: PromptValues; text: string } | null = null;
  return {
    uses,
    render: (values) => {
      if (last !== null && sameValues(last.values, values, uses)) return last.text;
      const text = template
        .replace(PLACEHOLDER_PATTERN, (_whole, name: string) => placeholderText(name as SystemPromptPlaceholder, values))
        // A template line that rendered empty (e.g. {{skills}} with none) leaves no stray blank lines at the end.
        .replace(/\s+$/, "");
      last = { values: { ...values, tools: [...values.tools], skills: values.skills.map(({ name, description }) => ({ name, description })) }, text };
      return text;
    },
  };
}

/**
 * Whether `b` renders as `a` did: every value a placeholder in `uses` reads is equal. The tools
 * decide {{tools}}, and also {{skills}} (whether load_skill is offered) and {{plan}}.
 */
function sameValues(a: PromptValues, b: PromptValues, uses: ReadonlySet<SystemPromptPlaceholder>): boolean {
  if (uses.has("workspace") && a.workspace !== b.workspace) return false;
  if (uses.has("date") && a.date !== b.date) return false;
  if (uses.has("os") && a.os !== b.os) return false;
  if ((uses.has("tools") || uses.has("skills") || uses.has("plan")) && !sameList(a.tools, b.tools)) return false;
  if (uses.has("skills")) {
    if (a.skills.length !== b.skills.length) return false;
    for (let i = 0; i < a.skills.length; i++) {
      if (a.skills[i]!.name !== b.skills[i]!.name || a.skills[i]!.description !== b.skills[i]!.description) return false;
    }
  }
  return true;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function placeholderText(name: SystemPromptPlaceholder, values: PromptValues): string {
  switch (name) {
    case "workspace":
      return values.workspace;
    case "date":
      return values.date;
    case "os":
      return values.os;
    case "tools":
      return values.tools.length > 0 ? values.tools.join(", ") : "none";
    case "skills":
      return skillsText(values.skills, values.tools.includes(LOAD_SKILL_TOOL));
    case "plan":
      return values.tools.includes(UPDATE_PLAN_TOOL) ? PLAN_GUIDANCE : "";
  }
}

/** `{{plan}}`: when to keep a plan (only while update_plan is offered). */
export const PLAN_GUIDANCE =
  `For a task that takes several steps, keep a plan with ${UPDATE_PLAN_TOOL}: send the whole list of steps when you start, ` +
  "then call it again whenever a step starts (in_progress, one at a time) or is done (completed). Skip it for simple questions and one-step changes.";

/** `{{skills}}`: nothing when there are none, else a short list and how to read one. */
export function skillsText(skills: readonly SkillSummary[], canLoad: boolean): string {
  if (skills.length === 0) return "";
  const how = canLoad
    ? `Skills: instructions for particular tasks. When a task matches one, call ${LOAD_SKILL_TOOL} with its name and follow what it says.`
    : "Skills: instructions for particular tasks (no tool to load them is offered now).";
  return [how, ...skills.map((s) => `- ${s.name}: ${s.description}`)].join("\n");
}
