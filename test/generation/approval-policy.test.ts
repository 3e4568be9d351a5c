/**
 * The approval decision table (src/generation/approval-policy.ts) as pure
 * function calls, and the confirmation timer of an offered call
 * (src/generation/tool-decision.ts) on fake timers: it fires once, and any
 * decision or the end of the round cancels it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToolCallRecord } from "../../protocol/index.js";
import { ConversationSettingsPatch } from "../../protocol/index.js";
import { approvalVerdict, isDeniedByPolicy, toolPolicyRule, type ApprovalSettings } from "../../src/generation/approval-policy.js";
import { PendingToolCall } from "../../src/generation/tool-decision.js";

const readOnly = { name: "read_file", annotations: { readOnlyHint: true } };
const destructive = { name: "shell", annotations: { readOnlyHint: false, destructiveHint: true } };
const unannotated = { name: "custom_thing" };

describe("approvalVerdict", () => {
  // mode × tool kind → verdict, with no per-tool overrides.
  const table: [ApprovalSettings["approval"], { name: string; annotations?: object }, string][] = [
    [undefined, readOnly, "ask"],
    [undefined, destructive, "ask"],
    ["ask", readOnly, "ask"],
    ["ask", destructive, "ask"],
    ["auto-read-only", readOnly, "run"],
    ["auto-read-only", destructive, "ask"],
    ["auto-read-only", unannotated, "ask"],
    ["auto-read-only", { name: "x", annotations: { destructiveHint: false } }, "ask"],
    ["auto", readOnly, "run"],
    ["auto", destructive, "run"],
    ["auto", unannotated, "run"],
  ];
  it.each(table)("approval %s, tool %o → %s", (approval, tool, verdict) => {
    expect(approvalVerdict(tool, { approval })).toBe(verdict);
  });

  it("a toolPolicy rule overrides the mode either way", () => {
    expect(approvalVerdict(destructive, { approval: "ask", toolPolicy: { shell: "always" } })).toBe("run");
    expect(approvalVerdict(readOnly, { approval: "auto", toolPolicy: { read_file: "ask" } })).toBe("ask");
    expect(approvalVerdict(readOnly, { approval: "auto-read-only", toolPolicy: { read_file: "ask" } })).toBe("ask");
    expect(approvalVerdict(readOnly, { approval: "auto", toolPolicy: { read_file: "never" } })).toBe("deny");
    expect(approvalVerdict(destructive, { approval: "auto-read-only", toolPolicy: { read_file: "always" } })).toBe("ask");
  });
});

describe("toolPolicyRule", () => {
  const policy = {
    "mcp__github__*": "always",
    "mcp__github__delete_*": "never",
    mcp__github__delete_branch: "ask",
    "mcp__*": "ask",
    "*": "never",
  } as const;

  it("an exact name beats every wildcard, and the longest matching prefix beats shorter ones", () => {
    expect(toolPolicyRule("mcp__github__delete_branch", policy)).toBe("ask");
    expect(toolPolicyRule("mcp__github__delete_repository", policy)).toBe("never");
    expect(toolPolicyRule("mcp__github__create_issue", policy)).toBe("always");
    expect(toolPolicyRule("mcp__slack__post", policy)).toBe("ask");
    expect(toolPolicyRule("shell", policy)).toBe("never");
  });

  it("the order of the keys does not matter", () => {
    const reversed = Object.fromEntries(Object.entries(policy).reverse());
    for (const name of ["mcp__github__delete_branch", "mcp__github__delete_repository", "mcp__github__create_issue", "mcp__x", "shell"]) {
      expect(toolPolicyRule(name, reversed as typeof policy)).toBe(toolPolicyRule(name, policy));
    }
  });

  it("no rule without a match; a key without * is not a prefix; inherited object members are not rules", () => {
    expect(toolPolicyRule("shell", undefined)).toBeUndefined();
    expect(toolPolicyRule("shell", {})).toBeUndefined();
    expect(toolPolicyRule("shell_extra", { shell: "never" })).toBeUndefined();
    expect(toolPolicyRule("constructor", { shell: "never" })).toBeUndefined();
    expect(toolPolicyRule("__proto__", {})).toBeUndefined();
    expect(approvalVerdict({ name: "toString" }, { toolPolicy: {} })).toBe("ask");
  });

  it("isDeniedByPolicy follows the same precedence", () => {
    expect(isDeniedByPolicy("mcp__github__delete_repository", { toolPolicy: policy })).toBe(true);
    expect(isDeniedByPolicy("mcp__github__delete_branch", { toolPolicy: policy })).toBe(false);
    expect(isDeniedByPolicy("shell", { approval: "auto" })).toBe(false);
  });
});

describe("settings schema", () => {
  it("accepts names and prefixes, refuses other keys, unknown rules and too many entries", () => {
    expect(ConversationSettingsPatch.safeParse({ toolPolicy: { "*": "ask", "mcp__a__*": "never", shell: "always" } }).success).toBe(true);
    for (const key of ["", "a*b", "**", "with space", "x".repeat(65)]) {
      expect(ConversationSettingsPatch.safeParse({ toolPolicy: { [key]: "ask" } }).success, key).toBe(false);
    }
    expect(ConversationSettingsPatch.safeParse({ toolPolicy: { shell: "maybe" } }).success).toBe(false);
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`t${i}`, "ask"]));
    expect(ConversationSettingsPatch.safeParse({ toolPolicy: many }).success).toBe(false);
    expect(ConversationSettingsPatch.safeParse({ confirmTimeoutMs: null }).success).toBe(true);
  });
});

describe("PendingToolCall confirmation timer", () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const record = { toolCallId: "call_1", toolName: "shell", arguments: {}, status: "pending" } as unknown as ToolCallRecord;

  it("skips an undecided call when the time is up, once", async () => {
    vi.useFakeTimers();
    const call = new PendingToolCall(record);
    call.startTimeout(1000);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(999);
    expect(call.decided).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await call.wait()).toEqual({ action: "skip" });
    expect(call.timedOutAfterMs).toBe(1000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a decision before the time is up wins and cancels the timer", async () => {
    vi.useFakeTimers();
    const call = new PendingToolCall(record);
    call.startTimeout(1000);
    expect(call.decide({ action: "confirm" })).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(await call.wait()).toEqual({ action: "confirm" });
    expect(call.timedOutAfterMs).toBeUndefined();
  });

  it("an interrupt's decision and dispose cancel it; a decided call never starts one", () => {
    vi.useFakeTimers();
    const interrupted = new PendingToolCall(record);
    interrupted.startTimeout(1000);
    interrupted.decide({ action: "interrupted" });
    const disposed = new PendingToolCall(record);
    disposed.startTimeout(1000);
    disposed.dispose();
    const decided = new PendingToolCall(record);
    decided.decide({ action: "confirm" });
    decided.startTimeout(1000);
    expect(vi.getTimerCount()).toBe(0);
    expect(disposed.decided).toBe(false);
  });
});
