/**
 * Modes from the configuration (`modes`): a mode added and a built-in one
 * changed reach modes.list and the model request (tools, prompt addendum,
 * model, reasoning effort); bad definitions are refused at start naming the
 * key. Slash commands whose front matter names a mode switch the
 * conversation to it.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentwireConfigFile } from "../../protocol/config.js";
import { ModeSet } from "../../src/generation/modes.js";
import { ConfigError } from "../../src/server.js";
import type { FakeChatBody } from "../fake-openai/server.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";
import { startTestServer } from "../harness/test-server.js";

const offered = (request: FakeChatBody) => (request.tools ?? []).map((t: any) => t.function?.name ?? t.name).sort();
const systemOf = (request: FakeChatBody) => (request.messages.find((m: { role: string }) => m.role === "system")?.content ?? "") as string;

let root: string;
let workspace: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "agentwire-modes-")));
  workspace = join(root, "ws");
  const put = async (dir: string, name: string, text: string) => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${name}.md`), text);
  };
  await put(join(workspace, ".agentwire", "commands"), "sketch", "---\ndescription: Plan it first.\nmode: plan\n---\nPlan how to $ARGUMENTS.\n");
  await put(join(workspace, ".agentwire", "commands"), "yolo", "---\nmode: auto\n---\nJust do it.\n");
  await put(join(workspace, ".agentwire", "commands"), "nowhere", "---\nmode: dreaming\n---\nDream.\n");
  await put(join(root, "xdg", "agentwire", "commands"), "mine", "---\nmode: auto\n---\nMy own auto command.\n");
  vi.stubEnv("XDG_CONFIG_HOME", join(root, "xdg"));
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(root, { recursive: true, force: true });
});

describe("modes from the configuration", () => {
  const fx = useAgentFixture({
    config: {
      modes: {
        review: { description: "Review without writing.", prompt: "REVIEW ONLY.", tools: "read-only", allow: ["shell"], model: "review-model", reasoning: "high" },
        code: { prompt: "CODE ADDENDUM." },
      },
    },
  });

  async function step(id: string, events: Awaited<ReturnType<typeof newConversation>>["events"], params: { model?: string } = {}): Promise<FakeChatBody> {
    fx.fake.enqueue({ kind: "reply", text: ["ok"] });
    const { generationId } = await fx.client.step({ conversationId: id, ...params });
    expect((await events.waitForEnd(generationId)).method).toBe("generation_complete");
    return fx.fake.requests.at(-1)!;
  }

  it("modes.list shows the added mode after the built-in ones, and the changed built-in", async () => {
    const { modes } = await fx.client.modes.list({});
    expect(modes.map((m) => m.id)).toEqual(["ask", "plan", "code", "auto", "review"]);
    expect(modes.find((m) => m.id === "review")).toEqual({
      id: "review",
      name: "Review",
      description: "Review without writing.",
      prompt: "REVIEW ONLY.",
      approval: null,
      tools: "read-only",
      allow: ["shell"],
      deny: [],
      model: "review-model",
      reasoning: "high",
      builtIn: false,
    });
    expect(modes.find((m) => m.id === "code")).toMatchObject({ name: "Code", prompt: "CODE ADDENDUM.", builtIn: true });
  });

  it("the added mode's tools, prompt, model and reasoning reach the request; a step's own model still wins", async () => {
    const { id, events } = await newConversation(fx.client, { settings: { mode: "review" } });
    const body = await step(id, events);
    expect(offered(body)).toContain("shell");
    expect(offered(body)).not.toContain("write_file");
    expect(systemOf(body).endsWith("\n\nREVIEW ONLY.")).toBe(true);
    expect(body).toMatchObject({ model: "review-model", reasoning_effort: "high" });
    expect((await step(id, events, { model: "fake-model" })).model).toBe("fake-model");
  });

  it("a changed built-in applies to conversations that name no mode (code is the default)", async () => {
    const { id, events } = await newConversation(fx.client);
    const body = await step(id, events);
    expect(systemOf(body).endsWith("\n\nCODE ADDENDUM.")).toBe(true);
    expect(offered(body)).toContain("write_file");
    expect(body.model).toBe("fake-model");
  });

  it("a command whose front matter names a mode switches the conversation to it before its message", async () => {
    const { id, events } = await newConversation(fx.client, { workspace });
    await fx.client.message.append({ conversationId: id, role: "user", command: "sketch", arguments: "add a flag" });
    expect(events.of("conversation_updated").at(-1)!.conversation.settings.mode).toBe("plan");
    const body = await step(id, events);
    expect(offered(body)).toContain("update_plan");
    expect(offered(body)).not.toContain("shell");
  });

  it("a workspace command may not switch to a mode whose calls run unasked, nor name an unknown mode; the user's own may", async () => {
    const { id } = await newConversation(fx.client, { workspace });
    const refused = (command: string) =>
      fx.client.message.append({ conversationId: id, role: "user", command }).then(() => undefined, (e: { code: number; message: string }) => e);
    expect(await refused("yolo")).toMatchObject({ code: -32602, message: expect.stringMatching(/command.*"auto".*without asking/) });
    expect(await refused("nowhere")).toMatchObject({ code: -32602, message: expect.stringMatching(/command.*mode "dreaming"/) });
    expect((await fx.client.conversation.get({ conversationId: id })).conversation.settings.mode).toBeUndefined();
    await fx.client.message.append({ conversationId: id, role: "user", command: "mine" });
    expect((await fx.client.conversation.get({ conversationId: id })).conversation.settings.mode).toBe("auto");
  });
});

describe("configuration checks", () => {
  it("a stored mode the configuration no longer has counts as the default, which changes nothing", () => {
    const modes = new ModeSet({ review: { tools: "read-only" } });
    expect(modes.of({ mode: "review" }).id).toBe("review");
    expect(new ModeSet().of({ mode: "review" })).toMatchObject({ id: "code", approval: null, prompt: "", tools: "all" });
    expect(new ModeSet().of({}).id).toBe("code");
  });

  it("a bad mode definition is refused by the schema naming the key", () => {
    const issue = (value: unknown) => {
      const parsed = AgentwireConfigFile.safeParse({ modes: value });
      return parsed.success ? undefined : parsed.error.issues[0]!.path.join(".");
    };
    expect(issue({ review: { tools: "some" } })).toBe("modes.review.tools");
    expect(issue({ review: { approval: "maybe" } })).toBe("modes.review.approval");
    expect(issue({ review: { colour: "red" } })).toBe("modes.review");
    expect(issue({ "Bad Name": {} })).toBe("modes.Bad Name");
    expect(issue({ review: { allow: ["not a tool"] } })).toBe("modes.review.allow.0");
  });

  it("a server whose conversations.settings.mode names no mode does not start", async () => {
    await expect(startTestServer({ conversations: { settings: { mode: "dreaming" } } })).rejects.toThrow(ConfigError);
    await expect(startTestServer({ conversations: { settings: { mode: "dreaming" } } })).rejects.toThrow(
      /conversations\.settings\.mode: unknown mode "dreaming" \(valid: ask, plan, code, auto; add it under `modes`\)/,
    );
  });
});
