/**
 * Remembered approvals (tool.confirm `remember`): which rule a call would be
 * remembered as, and whether a stored rule approves a call. Pure functions;
 * where rules are kept is settings.approvalRules (the conversation) and
 * workspace-approvals.ts (the workspace's file).
 */
import type { ApprovalRule } from "../../protocol/index.js";

/** The tool whose rules are by command prefix; every other tool's rules are by name. */
export const SHELL_TOOL = "shell";

/**
 * Commands whose second word is a subcommand that says what they do
 * (`git status` vs `git push`): their prefix is two words. The one list of
 * them (docs/tools.md quotes it).
 */
export const SUBCOMMAND_TOOLS: readonly string[] = [
  "git", "gh", "npm", "npx", "pnpm", "yarn", "bun", "deno", "cargo", "go", "docker", "podman", "kubectl", "helm",
  "pip", "pip3", "uv", "poetry", "make", "dotnet", "mvn", "gradle", "terraform", "brew", "apt", "apt-get", "systemctl",
];

/**
 * Commands that run another command given to them (or any code): a prefix
 * rule for them would approve everything, so such calls are never remembered.
 */
export const WRAPPER_COMMANDS: readonly string[] = [
  "sudo", "su", "doas", "env", "exec", "eval", "command", "builtin", "nohup", "nice", "ionice", "timeout", "time",
  "xargs", "watch", "sh", "bash", "zsh", "dash", "fish", "ksh", "ssh", "source", ".",
  "python", "python3", "node", "perl", "ruby", "php", "awk", "find",
];

/**
 * Characters that make a command line more than one simple command, or let it
 * run something its words do not show: separators (; & |), redirections (< >),
 * substitutions ($( ) and backticks, and any $ expansion), subshells and line
 * breaks. Checked anywhere in the line, quoted or not: telling quoted from
 * unquoted takes a shell parser, and a call that is wrongly judged compound
 * only means the user is asked.
 */
const COMPOUND = /[;&|<>`$()\n\r]/;

/** A plain command name or path: no quotes, globs, assignments (FOO=1 cmd) or escapes. */
const COMMAND_WORD = /^[A-Za-z0-9_./][A-Za-z0-9_.+\/-]*$/;
/** A subcommand: a plain word that is not an option. */
const SUBCOMMAND_WORD = /^[A-Za-z0-9][A-Za-z0-9_.:+@\/-]*$/;

/** True when the command line is one simple command (see COMPOUND). */
export function isSimpleCommand(command: string): boolean {
  return !COMPOUND.test(command);
}

/**
 * The prefix a shell command is remembered and matched by: its first word, or
 * its first two for SUBCOMMAND_TOOLS; undefined when the command cannot have
 * one (not a simple command, a wrapper command, a first word that is not a
 * plain name, or an option where a subcommand should be).
 */
export function commandPrefix(command: string): string | undefined {
  if (!isSimpleCommand(command)) return undefined;
  const words = command.trim().split(/[ \t]+/);
  const first = words[0] ?? "";
  if (!COMMAND_WORD.test(first)) return undefined;
  const name = first.slice(first.lastIndexOf("/") + 1);
  if (WRAPPER_COMMANDS.includes(name)) return undefined;
  const second = words[1];
  if (!SUBCOMMAND_TOOLS.includes(name) || second === undefined) return first;
  // `git -c x=y push`: an option before the subcommand can change what runs, so such a call has no prefix.
  return SUBCOMMAND_WORD.test(second) ? `${first} ${second}` : undefined;
}

/** The rule tool.confirm `remember` would store for this call (tool_pending `rememberAs`); undefined when it cannot be remembered. */
export function ruleFor(toolName: string, args: Record<string, unknown>): ApprovalRule | undefined {
  if (toolName !== SHELL_TOOL) return { tool: toolName };
  const command = args.command;
  if (typeof command !== "string") return undefined;
  const prefix = commandPrefix(command);
  return prefix === undefined ? undefined : { tool: toolName, prefix };
}

/**
 * True when a rule approves the call. A shell rule without a prefix approves
 * every shell call (only conversation.update or the file can make one); with
 * one, the command's own prefix must be exactly it, so a compound command
 * (which has none) is never approved by a prefix.
 */
export function ruleMatches(rule: ApprovalRule, toolName: string, args: Record<string, unknown>): boolean {
  if (rule.tool !== toolName) return false;
  if (rule.prefix === undefined) return true;
  if (toolName !== SHELL_TOOL || typeof args.command !== "string") return false;
  return commandPrefix(args.command) === rule.prefix;
}

export function anyRuleMatches(rules: readonly ApprovalRule[] | undefined, toolName: string, args: Record<string, unknown>): boolean {
  return (rules ?? []).some((rule) => ruleMatches(rule, toolName, args));
}

export function sameRule(a: ApprovalRule, b: ApprovalRule): boolean {
  return a.tool === b.tool && a.prefix === b.prefix;
}
