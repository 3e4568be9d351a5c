/**
 * The system prompt template: its placeholders, how an unknown one is
 * refused, and the built-in template. Plain data and functions, no zod: the
 * server renders and checks templates with them on its start path, and
 * protocol/config.ts's `conversations.systemPrompt` describes and checks
 * itself with them.
 */
/**
 * The placeholders a system prompt template may use, each `{{name}}`
 * (spaces inside the braces allowed). src/context/system-prompt.ts renders
 * them; anything else in double braces is refused, so a typo never reaches
 * the model as literal text.
 */
export const SYSTEM_PROMPT_PLACEHOLDERS = {
  workspace: "the conversation's workspace (absolute path)",
  date: "today's date, ISO (YYYY-MM-DD, UTC)",
  os: "the server's platform and release, e.g. \"linux 6.1.0\"",
  tools: "the names of the tools offered, comma-separated",
  skills: "the skills found for the workspace, one per line with its description, and how to load one (load_skill)",
  plan: "when update_plan is offered, when to keep a plan with it; nothing when it is not (turned off by settings.toolPolicy)",
} as const;
export type SystemPromptPlaceholder = keyof typeof SYSTEM_PROMPT_PLACEHOLDERS;

/** `{{ name }}` anywhere in a template. */
export const PLACEHOLDER_PATTERN = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The placeholder names a template uses that are not in SYSTEM_PROMPT_PLACEHOLDERS, in order, once each. */
export function unknownPlaceholders(template: string): string[] {
  const unknown = new Set<string>();
  for (const match of template.matchAll(PLACEHOLDER_PATTERN)) {
    if (!Object.hasOwn(SYSTEM_PROMPT_PLACEHOLDERS, match[1])) unknown.add(match[1]);
  }
  return [...unknown];
}

/** A template is refused when it names an unknown placeholder; the message lists it and the known ones. */
export function unknownPlaceholderMessage(unknown: readonly string[]): string {
  const known = Object.keys(SYSTEM_PROMPT_PLACEHOLDERS).map((n) => `{{${n}}}`).join(", ");
  return `unknown placeholder${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `{{${n}}}`).join(", ")} (known: ${known})`;
}


/** The system prompt template of conversations without their own when `conversations.systemPrompt` is not set. */
export const DEFAULT_SYSTEM_PROMPT_TEMPLATE = [
  "You are agentwire, an assistant that works in the workspace {{workspace}} on {{os}}. Today is {{date}}.",
  "Use your tools ({{tools}}) to look before you change anything, and say plainly what you did and what you found.",
  "{{plan}}",
  "{{skills}}",
].join("\n");

