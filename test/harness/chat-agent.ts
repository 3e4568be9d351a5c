/**
 * A server with its own fake model and a workspace (holding notes.txt) for
 * one `agentwire chat` test, so the chat tests can run concurrently: most of
 * their time is child processes starting. Shared by test/chat/.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { type AgentFixture, type AgentFixtureOptions, startAgentFixture } from "./agent-fixture.js";

export interface ChatSetup {
  fx: AgentFixture;
  workspace: string;
}

export function withChatAgent(body: (setup: ChatSetup) => Promise<void>, config: AgentFixtureOptions["config"] = {}): () => Promise<void> {
  return async () => {
    const fx = await startAgentFixture({ transport: "websocket", config });
    const workspace = await mkdtemp(join(tmpdir(), "agentwire-chat-"));
    await writeFile(join(workspace, "notes.txt"), "line one\nline two\nline three\nline four\n");
    try {
      await body({ fx, workspace });
      // No request the real API would have refused.
      expect(fx.fake.rejected).toEqual([]);
    } finally {
      await fx.close();
      await rm(workspace, { recursive: true, force: true });
    }
  };
}
