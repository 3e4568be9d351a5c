/**
 * The Codex runtime through its interface alone (src/runtimes/runtime.ts),
 * from source: a session outlives the runtime's process — a new process
 * resumes the thread by its id (what a step does after a server restart,
 * from Conversation.runtimeSession) and Codex sends the earlier turn back.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeDefinition } from "../../protocol/config-runtimes.js";
import { CodexRuntime } from "../../src/runtimes/codex-runtime.js";
import type { AgentRuntime, RuntimeEvent } from "../../src/runtimes/runtime.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fake-openai/server.js";
import { runtimePackages } from "../harness/runtime-cache.js";

const packages = runtimePackages();
if (!packages.ok) console.warn(`codex-resume.test.ts: ${packages.why}`);

async function turn(runtime: AgentRuntime, prompt: string, cwd: string, resumeId?: string) {
  const session = await runtime.open({ cwd, model: "fake-model", ...(resumeId ? { resumeId } : {}) });
  const events: RuntimeEvent[] = [];
  for await (const event of session.turn({ prompt, model: "fake-model" })) events.push(event);
  return { sessionId: session.sessionId, events };
}

describe.skipIf(!packages.ok)("a Codex session", () => {
  let fake: FakeOpenAI;
  let root: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    root = await mkdtemp(join(tmpdir(), "agentwire-codex-resume-"));
  });
  afterAll(async () => {
    await fake?.close();
    if (root) await rm(root, { recursive: true, force: true, maxRetries: 5 });
  });

  it("is resumed by its id in a new runtime process", async () => {
    const definition = RuntimeDefinition.parse({
      runtime: "codex",
      packageDir: packages.ok ? packages.dir : "",
      home: await mkdtemp(join(root, "home-")),
      baseUrl: fake.url,
    });
    fake.enqueue({ kind: "reply", text: ["First answer."] }, { kind: "reply", text: ["Second answer."] });
    const first = new CodexRuntime("codex", definition, process.env);
    const one = await turn(first, "first question", root);
    expect(one.events.filter((e) => e.type === "message")).toEqual([{ type: "message", text: "First answer." }]);
    expect(one.events.at(-1)).toEqual({ type: "done", outcome: "completed" });
    await first.close();

    const second = new CodexRuntime("codex", definition, process.env);
    try {
      const two = await turn(second, "second question", root, one.sessionId);
      expect(two.sessionId).toBe(one.sessionId);
      expect(two.events.at(-1)).toEqual({ type: "done", outcome: "completed" });
      const sent = JSON.stringify(fake.requests[1]!.input);
      expect(sent).toContain("first question");
      expect(sent).toContain("First answer.");
    } finally {
      await second.close();
    }
  }, 20_000);
});
