/**
 * One durable write per state change (issue 27): a plain turn's end — the
 * assistant record, the conversation's metadata (usage totals) and the run
 * state (lastGeneration) — is written together: on the lowdb store, one
 * records file write and one meta.json write, not a meta.json write per change.
 * Counts the store's file writes during a turn, and checks what they left
 * on disk after a restart.
 */
import { basename } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LowdbFile } from "../../src/store/lowdb-file.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

describe("store writes of a turn's end", () => {
  const fx = useAgentFixture();
  afterEach(() => vi.restoreAllMocks());

  it("a plain turn writes its record, usage totals and run state in one meta.json write", async () => {
    const { id, events } = await newConversation(fx.client);
    // A first turn: the conversation is loaded and its seq block reserved.
    fx.fake.enqueue({ kind: "reply", text: ["Hi"] });
    const first = await fx.client.step({ conversationId: id });
    await fx.client.generation.wait({ conversationId: id, generationId: first.generationId });
    await fx.client.message.append({ conversationId: id, role: "user", content: "again" });

    const writes: string[] = [];
    const write = LowdbFile.prototype.write;
    vi.spyOn(LowdbFile.prototype, "write").mockImplementation(function (this: LowdbFile<object>, data) {
      writes.push(basename(this.path));
      return write.call(this, data);
    });
    fx.fake.enqueue({ kind: "reply", text: ["Hel", "lo", "!"], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } });
    const { generationId } = await fx.client.step({ conversationId: id });
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("generation_complete");
    // The events are as before: the record, the usage, then the end.
    expect(events.flow().slice(-3)).toEqual(["message_added", "usage_updated", "generation_complete"]);
    await fx.client.generation.wait({ conversationId: id, generationId });
    expect(writes.filter((file) => file !== "index.json")).toEqual(["records-000000.json", "meta.json"]);

    // What that one write left: the record, the usage totals and lastGeneration, read back after a restart.
    const state = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(state.records!.at(-1)).toMatchObject({ role: "assistant", content: "Hello!", generationId });
    expect(state.conversation.usage).toMatchObject({ modelCalls: 2 });
    expect(state.state.lastGeneration).toMatchObject({ generationId, outcome: "completed" });
  });
});
