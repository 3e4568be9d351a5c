/**
 * One durable write per state change (issue 27): a plain turn's end — the
 * assistant record, the conversation's metadata (usage totals) and the run
 * state (lastGeneration) — is written together: on the lowdb store, one
 * line appended to the conversation's journal (src/store/lowdb-journal.ts),
 * no segment or meta.json rewritten. Counts the store's file writes during
 * a turn, and checks what the one write holds.
 */
import { basename } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConversationJournal } from "../../src/store/lowdb-journal.js";
import { LowdbFile } from "../../src/store/lowdb-file.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

describe("store writes of a turn's end", () => {
  const fx = useAgentFixture();
  afterEach(() => vi.restoreAllMocks());

  it("a plain turn writes its record, usage totals and run state in one journal line", async () => {
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
    const lines: string[] = [];
    const append = ConversationJournal.prototype.append;
    vi.spyOn(ConversationJournal.prototype, "append").mockImplementation(function (this: ConversationJournal, ...args) {
      writes.push(basename(this.path));
      lines.push(args[3]);
      return append.apply(this, args);
    });
    fx.fake.enqueue({ kind: "reply", text: ["Hel", "lo", "!"], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } });
    const { generationId } = await fx.client.step({ conversationId: id });
    const end = await events.waitForEnd(generationId);
    expect(end.method).toBe("generation_complete");
    // The events are as before: the record, the usage, then the end.
    expect(events.flow().slice(-3)).toEqual(["message_added", "usage_updated", "generation_complete"]);
    await fx.client.generation.wait({ conversationId: id, generationId });
    expect(writes.filter((file) => file !== "index.json")).toEqual(["replaced.jsonl"]);
    // The line: the assistant record, and the metadata after it with the usage totals and the run state.
    const line = JSON.parse(lines[0]);
    expect(line.records.map((r: { role: string; content: string }) => [r.role, r.content])).toEqual([["assistant", "Hello!"]]);
    expect(line.meta.conversation.usage).toMatchObject({ modelCalls: 2 });
    expect(line.meta.runState.lastGeneration).toMatchObject({ generationId, outcome: "completed" });

    // What the server answers after it: the record, the usage totals and lastGeneration.
    const state = await fx.client.conversation.get({ conversationId: id, includeRecords: true });
    expect(state.records!.at(-1)).toMatchObject({ role: "assistant", content: "Hello!", generationId });
    expect(state.conversation.usage).toMatchObject({ modelCalls: 2 });
    expect(state.state.lastGeneration).toMatchObject({ generationId, outcome: "completed" });
  });
});
