/**
 * ConversationRuntime owns its run state: the running generation, lastError,
 * the auto-confirm budget, deleted and silenced change only through its own
 * methods, which hold the rules — one generation at a time, none on a deleted
 * conversation, lastError follows the endings the runtime announces. Outside
 * code can read them but not assign them (a getter-only property: assigning
 * throws in a module, and does not compile).
 */
import { describe, expect, it } from "vitest";
import type { Conversation } from "../../protocol/index.js";
import { DEFAULT_CONVERSATION_SETTINGS } from "../../protocol/index.js";
import { createLogger } from "../../src/logging/logger.js";
import type { ActiveGeneration } from "../../src/sessions/active-generation.js";
import { ConversationRuntime } from "../../src/sessions/conversation-runtime.js";
import { ReplayBudget } from "../../src/sessions/event-log.js";
import type { GenerationSummary } from "../../src/store/conversation-store.js";
import { MemoryConversationStore } from "../../src/store/memory-store.js";

async function runtime(): Promise<ConversationRuntime> {
  const now = new Date().toISOString();
  const conversation: Conversation = {
    id: `c_${Math.random().toString(36).slice(2)}`,
    title: "",
    createdAt: now,
    updatedAt: now,
    model: null,
    system: null,
    workspace: null,
    settings: { ...DEFAULT_CONVERSATION_SETTINGS },
    recordCount: 0,
  };
  const handle = await new MemoryConversationStore().create(conversation);
  return new ConversationRuntime(handle, new Set(), { eventLogSize: 100, eventLogBytes: 1 << 20 }, new ReplayBudget(1 << 20), createLogger("silent"));
}

function generation(id: string): ActiveGeneration {
  return {
    id,
    pendingTools: () => [],
    offered: () => undefined,
    decide: () => false,
    autoConfirmWaiting: () => {},
    confirmWaiting: () => {},
    interrupt: async () => {},
    shutdown: async () => {},
    abandon: async () => {},
  };
}

function ending(generationId: string, outcome: GenerationSummary["outcome"]): GenerationSummary {
  return { generationId, outcome, endedAt: new Date().toISOString(), usage: null, modelCalls: 1, finalRecordId: null };
}

describe("ConversationRuntime's run state", () => {
  it("cannot be assigned from outside", async () => {
    const r = await runtime();
    for (const field of ["generation", "lastError", "autoConfirmRemaining", "deleted", "silenced"]) {
      expect(() => {
        (r as unknown as Record<string, unknown>)[field] = null;
      }, field).toThrow(TypeError);
    }
    // @ts-expect-error the running generation changes only through beginGeneration / endGeneration
    expect(() => (r.generation = null)).toThrow(TypeError);
  });

  it("one generation at a time: a second begin is GENERATION_IN_PROGRESS, its end lets the next begin", async () => {
    const r = await runtime();
    r.beginGeneration(generation("g_1"));
    expect(r.state()).toMatchObject({ generating: true, generationId: "g_1" });
    expect(() => r.beginGeneration(generation("g_2"))).toThrow(expect.objectContaining({ code: -32020, data: { generationId: "g_1" } }));
    expect(r.busy).toBe(true);
    // An ending of another generation (a takeover ending one its lost owner ran) leaves the running one alone.
    r.endGeneration(ending("g_0", "error"));
    expect(r.generation?.id).toBe("g_1");
    r.endGeneration(ending("g_1", "completed"));
    expect(r.generation).toBeNull();
    expect(r.lastGeneration?.generationId).toBe("g_1");
    r.beginGeneration(generation("g_2"));
    expect(r.generation?.id).toBe("g_2");
  });

  it("nothing begins on a deleted conversation", async () => {
    const r = await runtime();
    r.markDeleted();
    expect(r.deleted).toBe(true);
    expect(() => r.beginGeneration(generation("g_1"))).toThrow(expect.objectContaining({ code: -32010 }));
    expect(r.generation).toBeNull();
  });

  it("lastError follows the endings it announces: set by an error, kept by an interrupt, cleared by a completion", async () => {
    const r = await runtime();
    r.beginGeneration(generation("g_1"));
    const seq = r.publish("error", { generationId: "g_1", code: -32030, message: "the endpoint said no", status: 429 });
    await r.delivered();
    const sent = JSON.parse(r.events.since(seq - 1, r.seq)![0]!.frame).params;
    expect(r.lastError).toEqual({ code: -32030, message: "the endpoint said no", status: 429, timestamp: sent.timestamp });
    r.endGeneration(ending("g_1", "error"));
    // Announced again for a generation already ended (a takeover repeating it): nothing changes.
    const before = r.lastError;
    r.publish("error", { generationId: "g_1", code: -32070, message: "again" });
    expect(r.lastError).toBe(before);

    r.beginGeneration(generation("g_2"));
    r.publish("interrupted", { generationId: "g_2", phase: "streaming" });
    expect(r.lastError).toBe(before);
    r.endGeneration(ending("g_2", "interrupted"));

    r.beginGeneration(generation("g_3"));
    r.publish("generation_complete", { generationId: "g_3", iteration: 1, finishReason: "stop", usage: null, final: false });
    expect(r.lastError).toBe(before);
    r.publish("generation_complete", { generationId: "g_3", iteration: 2, finishReason: "stop", usage: null, final: true });
    expect(r.lastError).toBeNull();
    expect(r.state().lastError).toBeNull();
  });

  it("the auto-confirm budget is granted and spent a use at a time, never below zero", async () => {
    const r = await runtime();
    expect(r.spendAutoConfirm()).toBe(false);
    r.grantAutoConfirm(2);
    expect(r.state().autoConfirmRemaining).toBe(2);
    expect([r.spendAutoConfirm(), r.spendAutoConfirm(), r.spendAutoConfirm()]).toEqual([true, true, false]);
    expect(r.autoConfirmRemaining).toBe(0);
    expect(r.runState().autoConfirmRemaining).toBe(0);
  });

  it("a silenced runtime sends nothing more", async () => {
    const r = await runtime();
    r.publish("conversation_updated", { conversation: r.handle.conversation, deleted: false });
    await r.delivered();
    const sent = r.seq;
    r.silence();
    expect(r.silenced).toBe(true);
    r.publish("conversation_updated", { conversation: r.handle.conversation, deleted: false });
    await r.delivered();
    expect(r.seq).toBe(sent);
  });
});
