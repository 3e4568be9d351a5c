/**
 * Remembered approvals as pure functions (src/tools/approval-rules.ts
 * and approvalVerdict with a call): which prefix a shell command is
 * remembered by, which commands have none, and which calls a rule approves.
 */
import { describe, expect, it } from "vitest";
import { approvalVerdict } from "../../src/generation/approval-policy.js";
import { commandPrefix, ruleFor, ruleMatches } from "../../src/tools/approval-rules.js";

describe("commandPrefix", () => {
  const table: [string, string | undefined][] = [
    ["ls", "ls"],
    ["ls -la src", "ls"],
    ["  cat  README.md ", "cat"],
    ["git status", "git status"],
    ["git status --short", "git status"],
    ["git", "git"],
    ["npm run test", "npm run"],
    ["docker compose up", "docker compose"],
    ["./build.sh --fast", "./build.sh"],
    // An option where the subcommand goes can change what runs.
    ["git -c core.pager=x log", undefined],
    // Compound: separators, pipes, redirections, substitutions, line breaks — even quoted.
    ["git status; rm -rf /", undefined],
    ["git status && rm x", undefined],
    ["git status || rm x", undefined],
    ["ls | sh", undefined],
    ["ls > out.txt", undefined],
    ["cat < /etc/passwd", undefined],
    ["echo $(rm x)", undefined],
    ["echo `rm x`", undefined],
    ["echo $HOME", undefined],
    ["ls &", undefined],
    ["ls\nrm x", undefined],
    ["(rm x)", undefined],
    ['git commit -m "a; b"', undefined],
    // Wrappers run whatever follows; assignments and quoting hide the command.
    ["sudo rm -rf /", undefined],
    ["env rm x", undefined],
    ["bash -c ls", undefined],
    ["xargs rm", undefined],
    ["/usr/bin/sudo ls", undefined],
    ["FOO=1 rm x", undefined],
    ["'rm' x", undefined],
    ["", undefined],
  ];
  it.each(table)("%j → %j", (command, prefix) => {
    expect(commandPrefix(command)).toBe(prefix);
  });
});

describe("rules", () => {
  it("shell rules are by prefix, exactly; other tools' by name", () => {
    expect(ruleFor("shell", { command: "git status -s" })).toEqual({ tool: "shell", prefix: "git status" });
    expect(ruleFor("shell", { command: "git status; ls" })).toBeUndefined();
    expect(ruleFor("write_file", { path: "a" })).toEqual({ tool: "write_file" });
    const rule = { tool: "shell", prefix: "git status" };
    expect(ruleMatches(rule, "shell", { command: "git status ." })).toBe(true);
    expect(ruleMatches(rule, "shell", { command: "git statusx" })).toBe(false);
    expect(ruleMatches(rule, "shell", { command: "git status && git push" })).toBe(false);
    expect(ruleMatches({ tool: "shell", prefix: "git" }, "shell", { command: "git push" })).toBe(false);
    expect(ruleMatches({ tool: "write_file" }, "write_file", { path: "x" })).toBe(true);
    expect(ruleMatches({ tool: "write_file" }, "edit_file", { path: "x" })).toBe(false);
  });

  it("approvalVerdict: a rule turns ask into rule (conversation's or workspace's), never a denied tool", () => {
    const shell = { name: "shell" };
    const args = { arguments: { command: "ls -la" } };
    const rules = [{ tool: "shell", prefix: "ls" }];
    expect(approvalVerdict(shell, {}, args)).toBe("ask");
    expect(approvalVerdict(shell, { approvalRules: rules }, args)).toBe("rule");
    expect(approvalVerdict(shell, {}, { ...args, workspaceRules: rules })).toBe("rule");
    expect(approvalVerdict(shell, { approvalRules: rules, toolPolicy: { shell: "ask" } }, args)).toBe("rule");
    expect(approvalVerdict(shell, { approvalRules: rules, toolPolicy: { shell: "never" } }, args)).toBe("deny");
    expect(approvalVerdict(shell, { approvalRules: rules, approval: "auto" }, args)).toBe("run");
    expect(approvalVerdict(shell, { approvalRules: rules })).toBe("ask"); // without the call, no rule applies
  });
});

describe("docs", () => {
  it("docs/tools.md lists every command remembered by two words", async () => {
    const { readFile } = await import("node:fs/promises");
    const { SUBCOMMAND_TOOLS } = await import("../../src/tools/approval-rules.js");
    const page = await readFile(new URL("../../docs/tools.md", import.meta.url), "utf8");
    const section = page.slice(page.indexOf("### Remembered approvals"));
    for (const name of SUBCOMMAND_TOOLS) expect(section, name).toContain(`\`${name}\``);
  });
});
