/**
 * history.importSession: each fixture format becomes a conversation whose
 * records pair every tool call with its result, and whose context the fake
 * model endpoint (which refuses what the real API refuses) accepts on the
 * next step; what does not map is counted; an unknown id is refused.
 */
import { afterAll, describe, expect, it } from "vitest";
import { useAgentFixture } from "../harness/agent-fixture.js";
import { EventRecorder } from "../harness/event-recorder.js";
import { expectInvalidParams } from "../harness/rpc-errors.js";
import { CLAUDE_SESSION, CODEX_SESSION, copyHistoryFixtures } from "./history-fixture-dirs.js";

const dirs = copyHistoryFixtures();
afterAll(() => dirs.remove());

/** The records as a compact list: role or tool, and for tool calls their status. */
const shape = (records: any[]) =>
  records.map((r) => (r.type === "message" ? `${r.role}${r.toolCalls ? `→${r.toolCalls.map((c: any) => c.toolName).join(",")}` : ""}` : `${r.toolName}:${r.status}`));

for (const wire of ["chat", "responses"] as const) {
  describe(`history.importSession (${wire} wire)`, () => {
    const fx = useAgentFixture({ wire, config: { history: { codexHome: dirs.codexHome, claudeProjects: dirs.claudeProjects } } });

    /** Imports, then steps once: the model must accept the imported context. */
    async function importAndStep(id: string) {
      const imported = await fx.client.history.importSession({ id });
      const conversationId = imported.conversation.id;
      const { records } = await fx.client.conversation.get({ conversationId, includeRecords: true });
      const events = new EventRecorder(fx.client, conversationId);
      await fx.client.conversation.subscribe({ conversationId });
      await fx.client.message.append({ conversationId, role: "user", content: "Carry on." });
      fx.fake.enqueue({ kind: "reply", text: ["Carrying on."] });
      const { generationId } = await fx.client.step({ conversationId });
      expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
      return { imported, records: records!, sent: fx.fake.messagesOf(fx.fake.requests.length - 1) };
    }

    it("a Codex rollout: messages, reasoning, function, local shell and custom tool calls with their outputs", async () => {
      const { imported, records, sent } = await importAndStep(CODEX_SESSION);
      expect(imported.conversation.title).toBe("Why does the invoice total test fail?");
      expect(imported.conversation.workspace).toBeNull(); // /home/dana/… is not on this machine
      expect(shape(records)).toEqual([
        "user",
        "assistant→shell",
        "shell:failed",
        "assistant→local_shell",
        "local_shell:completed",
        "assistant",
        "user",
        "assistant→apply_patch",
        "apply_patch:completed",
        "assistant",
      ]);
      expect(imported).toMatchObject({ recordCount: 10, truncated: false });
      // developer message, environment context, the image, the unknown line
      expect(imported.skipped).toBe(4);
      const shell = records[2] as any;
      expect(shell).toMatchObject({ toolCallId: "call_Ab12", exitCode: 1, arguments: { command: ["bash", "-lc", "npm test -- invoice"] } });
      expect(shell.result).toContain("expected 10.01, got 10");
      expect((records[1] as any).reasoning).toBe("**Running the failing test**");
      expect((records[3] as any).toolCalls).toEqual([{ toolCallId: "call_Cd34", toolName: "local_shell" }]);
      expect(JSON.stringify(sent)).toContain("Math.round(x * 100) / 100");
    });

    it("a Claude Code transcript: blocks of one reply joined, tool_use paired with tool_result, the damaged line left out", async () => {
      const { imported, records, sent } = await importAndStep(CLAUDE_SESSION);
      expect(imported.conversation.title).toBe("Add a test for negative invoice totals");
      expect(shape(records)).toEqual(["user", "assistant→Read", "Read:completed", "assistant→Bash", "Bash:failed", "assistant"]);
      expect(records[1]).toMatchObject({ content: "I'll look at the test file first.", reasoning: "I should read the existing tests first." });
      expect(records[4]).toMatchObject({ toolCallId: "toolu_02Bash", arguments: { command: "npm test" }, result: "1 failing: negative totals" });
      // the damaged line and the isMeta caveat
      expect(imported.skipped).toBe(2);
      expect(JSON.stringify(sent)).toContain("1 failing: negative totals");
    });

    it("takes a title of the caller's, and refuses an id the index does not hold", async () => {
      const imported = await fx.client.history.importSession({ id: CLAUDE_SESSION, title: "From Claude Code" });
      expect(imported.conversation.title).toBe("From Claude Code");
      const error = await expectInvalidParams(fx.client.history.importSession({ id: "codex:no-such-session" }), "id");
      expect(error.message).toContain("codex:no-such-session");
    });
  });
}
