/**
 * Custom tools: commands from the configuration offered as tools. The
 * arguments reach the command as environment variables only, so shell
 * syntax in them is data; the JSON Schema checks the calls; the command runs
 * with the shell tool's time limit and output handling; a configuration
 * that cannot work stops the start naming the tool.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CustomToolDefinition } from "../../protocol/config-tools.js";
import { defaultTools } from "../../src/tools/builtin-registry.js";
import { configuredTools } from "../../src/tools/configured-tools.js";
import { createCustomTool } from "../../src/tools/custom-command.js";
import type { Tool, ToolResult } from "../../src/tools/tool.js";
import { ToolConfigError } from "../../src/tools/tool-config-error.js";
import { checkArguments } from "../../src/tools/validate-arguments.js";
import { newConversation, useAgentFixture } from "../harness/agent-fixture.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentwire-custom-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

function tool(definition: Partial<CustomToolDefinition> & { command: string }): Tool {
  return createCustomTool({ name: "t", description: "a test tool", ...definition }, { env: baseEnv });
}

async function call(t: Tool, args: Record<string, unknown>, timeoutMs = 10_000, signal = new AbortController().signal): Promise<ToolResult & { streamed: string }> {
  const checked = await checkArguments(t.parameters, args);
  if (!checked.ok) throw new Error(`invalid arguments: ${JSON.stringify(checked.issues)}`);
  let streamed = "";
  const result = await t.run(checked.value, { cwd: dir, conversationId: "c_test", signal, timeoutMs, onOutput: (_s, chunk) => (streamed += chunk) });
  return { ...result, streamed };
}

/** A payload that, spliced into a command line, would create `marker`. */
const injections = (marker: string) => [
  `'; touch ${marker} #`,
  `"; touch ${marker}; echo "`,
  `$(touch ${marker})`,
  `\`touch ${marker}\``,
  `x && touch ${marker}`,
];

describe("running a custom tool", () => {
  it("passes each argument as ARG_<NAME> (strings raw, others as JSON) and all of them as AGENTWIRE_ARGS", async () => {
    const t = tool({
      command: `printf '%s\\n' "$ARG_FILE_PATH" "$ARG_COUNT" "$ARG_TAGS" "$ARG_OPTS" "$ARG_DRY" "$AGENTWIRE_ARGS"`,
      parameters: {
        type: "object",
        properties: {
          "file-path": { type: "string" },
          count: { type: "integer" },
          tags: { type: "array", items: { type: "string" } },
          opts: { type: "object", properties: { deep: { type: "boolean" } } },
          dry: { type: "boolean" },
        },
        required: ["file-path"],
      },
    });
    const args = { "file-path": "a b/c.txt", count: 3, tags: ["x", "y"], opts: { deep: true }, dry: false };
    const result = await call(t, args);
    expect(result).toMatchObject({ success: true, exitCode: 0 });
    expect(result.output.split("\n").slice(0, 6)).toEqual(['a b/c.txt', "3", '["x","y"]', '{"deep":true}', "false", JSON.stringify(args)]);
    // Streamed like the shell tool's output.
    expect(result.streamed).toBe(result.output);
  });

  it("never runs shell syntax inside an argument: it arrives as data, even unquoted, and no file is created", async () => {
    const marker = join(dir, "pwned");
    // Quoted (as the README recommends) and unquoted: expansion never re-parses the value as commands.
    const t = tool({
      command: `printf 'quoted:%s\\n' "$ARG_TEXT"; echo unquoted: $ARG_TEXT; printf 'json:%s\\n' "$AGENTWIRE_ARGS"`,
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
    for (const payload of injections(marker)) {
      const result = await call(t, { text: payload });
      expect(result.success).toBe(true);
      expect(result.output).toContain(`quoted:${payload}\n`);
      expect(result.output).toContain(`json:${JSON.stringify({ text: payload })}\n`);
      expect(existsSync(marker)).toBe(false);
    }
    // The check can fail: the same payload spliced into a command line does create the file.
    const spliced = tool({ command: `echo '${injections(marker)[0]}'` });
    await call(spliced, {});
    expect(existsSync(marker)).toBe(true);
    await rm(marker);
  });

  it("gives the command the scrubbed tool environment: no server secrets, no stale ARG_ variables", async () => {
    const [t] = configuredTools(
      { custom: [{ name: "env_dump", description: "d", command: "env" }], web: {}, envAllow: ["ARG_*", "MY_VAR"] },
      [],
      { PATH: baseEnv.PATH, OPENAI_API_KEY: "sk-secret", AGENTWIRE_TOKEN: "tok", ARG_STALE: "old", MY_VAR: "visible" },
    );
    const result = await call(t!, {});
    expect(result.output).toContain("MY_VAR=visible");
    expect(result.output).toContain("AGENTWIRE_ARGS={}");
    expect(result.output).not.toContain("sk-secret");
    expect(result.output).not.toContain("AGENTWIRE_TOKEN");
    expect(result.output).not.toContain("=tok\n");
    expect(result.output).not.toContain("ARG_STALE");
  });

  it("fails with the exit code and the output when the command fails", async () => {
    const result = await call(tool({ command: "echo about to fail >&2; exit 3" }), {});
    expect(result).toMatchObject({ success: false, exitCode: 3 });
    expect(result.output).toContain("about to fail");
    expect(result.output).toContain("[exit code: 3]");
  });

  it("stops at the tool's own time limit when it is below the conversation's, and at the conversation's when that is lower", async () => {
    const slow = tool({ command: "sleep 10", timeoutMs: 300 });
    let started = Date.now();
    const own = await call(slow, {}, 60_000);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(own).toMatchObject({ success: false });
    expect(own.output).toContain("[timed out after 300 ms]");

    started = Date.now();
    const conversation = await call(tool({ command: "sleep 10", timeoutMs: 60_000 }), {}, 200);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(conversation.output).toContain("[timed out after 200 ms]");
  });

  it("stops at once on interrupt", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const result = await call(tool({ command: "sleep 10" }), {}, 60_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({ success: false });
    expect(result.output).toContain("[interrupted]");
  });

  it("refuses an argument that cannot be an environment variable with a clear tool error", async () => {
    const t = tool({ command: "true", parameters: { type: "object", properties: { text: { type: "string" } } } });
    const nul = await call(t, { text: "a\0b" });
    expect(nul).toMatchObject({ success: false });
    expect(nul.output).toContain('Argument "text" contains a NUL character');
    const huge = await call(t, { text: "x".repeat(200 * 1024) });
    expect(huge.output).toMatch(/Argument "text" is too large to pass to a command \(\d+ bytes/);
  });
});

describe("argument checks from the JSON Schema", () => {
  const t = tool({
    command: "true",
    parameters: {
      type: "object",
      properties: { query: { type: "string", minLength: 1 }, mode: { enum: ["fast", "full"] }, limit: { type: "integer", minimum: 1 } },
      required: ["query"],
    },
  });
  const issues = async (args: unknown) => {
    const checked = await checkArguments(t.parameters, args);
    return checked.ok ? [] : checked.issues.map((i) => `${i.path}:${i.code}`);
  };

  it("checks required, types, enums and bounds, and refuses unknown arguments unless the schema allows them", async () => {
    expect(await issues({ query: "q", mode: "fast", limit: 2 })).toEqual([]);
    expect(await issues({})).toEqual(["query:invalid_type"]);
    expect(await issues({ query: 5 })).toEqual(["query:invalid_type"]);
    expect(await issues({ query: "q", mode: "slow" })).toEqual(["mode:invalid_value"]);
    expect(await issues({ query: "q", limit: 0 })).toEqual(["limit:too_small"]);
    expect(await issues({ query: "q", limit: 1.5 })).toEqual(["limit:invalid_type"]);
    expect(await issues({ query: "q", extra: 1 })).toEqual([":unrecognized_keys"]);
    // What the model is offered says so too.
    expect(t.inputSchema).toMatchObject({ additionalProperties: false, required: ["query"] });

    const open = tool({ command: "true", parameters: { type: "object", properties: {}, additionalProperties: true } });
    expect((await checkArguments(open.parameters, { anything: 1 })).ok).toBe(true);
  });
});

describe("start-up checks", () => {
  const config = (custom: CustomToolDefinition[]) => ({ custom, web: {}, envAllow: [] });
  const startError = (fn: () => unknown): ToolConfigError => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(ToolConfigError);
      return error as ToolConfigError;
    }
    throw new Error("expected a ToolConfigError");
  };
  const ok = { name: "ok", description: "d", command: "true" };

  it("refuses duplicate names and names of built-in or web tools", () => {
    expect(startError(() => configuredTools(config([ok, { ...ok }]))).message).toBe(
      'tools.custom[1]: custom tool "ok": the name is already taken by tools.custom[0]; rename it',
    );
    expect(startError(() => configuredTools(config([{ ...ok, name: "shell" }]), defaultTools())).message).toContain(
      "already taken by the built-in tool shell",
    );
    const web = { custom: [{ ...ok, name: "web_fetch" }], web: { fetch: { enabled: true } }, envAllow: [] };
    expect(startError(() => configuredTools(web)).message).toContain("already taken by the web tool web_fetch");
  });

  it("refuses a schema it cannot use, naming the tool and the problem", () => {
    const bad = (parameters: Record<string, unknown>) => startError(() => configuredTools(config([ok, { ...ok, name: "bad", parameters }]))).message;
    expect(bad({ type: "object", properties: { a: { $ref: "#/definitions/missing" } } })).toBe(
      'tools.custom[1]: custom tool "bad": its parameters JSON Schema cannot be used: Reference not found: #/definitions/missing',
    );
    expect(bad({ type: "object", properties: { a: { type: "strange" } } })).toContain("Unsupported type: strange");
    expect(bad({ type: "string" })).toContain('parameters must be an object schema ({"type": "object", "properties": {...}}), got type "string"');
    expect(bad({ type: "object", properties: { "a-b": { type: "string" }, a_b: { type: "string" } } })).toContain(
      'arguments "a-b" and "a_b" would both arrive as ARG_A_B',
    );
  });
});

describe("end to end through the protocol", () => {
  const lookup: CustomToolDefinition = {
    name: "lookup",
    description: "Echo a term back.",
    command: `printf 'term=%s\\n' "$ARG_TERM"`,
    parameters: { type: "object", properties: { term: { type: "string", description: "What to look up." } }, required: ["term"] },
    readOnly: true,
  };
  const failing: CustomToolDefinition = { name: "deploy", description: "Deploy.", command: "echo deploying; exit 7" };
  const slow: CustomToolDefinition = { name: "slow", description: "Slow.", command: "echo started; sleep 10", timeoutMs: 300 };
  const fx = useAgentFixture({ config: { tools: { custom: [lookup, failing, slow] } } });

  it("lists the tool with its schema and annotations and offers it to the model; the call runs with its argument as data", async () => {
    const { tools } = await fx.client.tools.list();
    const listed = tools.find((t) => t.name === "lookup");
    expect(listed).toEqual({
      name: "lookup",
      description: "Echo a term back.",
      parameters: { ...lookup.parameters, additionalProperties: false },
      annotations: { readOnlyHint: true, destructiveHint: false },
      source: "custom",
      // A command runs whatever it says: "execute" unless its configuration declares a kind.
      kind: "execute",
      title: "lookup",
    });
    expect(tools.find((t) => t.name === "deploy")).toMatchObject({ source: "custom", annotations: { readOnlyHint: false, destructiveHint: true } });

    const marker = join(dir, "pwned-e2e");
    const term = injections(marker)[0]!;
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_1", name: "lookup", args: JSON.stringify({ term }) }] },
      { kind: "reply", text: ["Found it."] },
    );
    const { id, events } = await newConversation(fx.client, { workspace: dir });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);

    const offered = fx.fake.requests[0]!.tools!.find((t) => t.function.name === "lookup");
    expect(offered).toEqual({
      type: "function",
      function: { name: "lookup", description: "Echo a term back.", parameters: { ...lookup.parameters, additionalProperties: false } },
    });
    const completed = events.of("tool_completed")[0]!;
    expect(completed.record).toMatchObject({ toolName: "lookup", success: true, result: `term=${term}\n`, exitCode: 0 });
    expect(events.of("tool_output").map((o) => o.chunk).join("")).toBe(`term=${term}\n`);
    // The model read the result as the tool message.
    expect(fx.fake.requests[1]!.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: `term=${term}\n` });
    expect(existsSync(marker)).toBe(false);
  });

  it("reports a failing command as tool_failed with its exit code", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_d", name: "deploy", args: "{}" }] }, { kind: "reply", text: ["It failed."] });
    const { id, events } = await newConversation(fx.client, { workspace: dir });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);
    const failed = events.of("tool_failed")[0]!;
    expect(failed.record).toMatchObject({ toolName: "deploy", status: "failed", success: false, exitCode: 7 });
    expect(failed.record.result).toContain("deploying");
    expect(failed.record.result).toContain("[exit code: 7]");
  });

  it("stops a command at the tool's time limit: tool_failed, with its output and the limit", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_t", name: "slow", args: "{}" }] }, { kind: "reply", text: ["Too slow."] });
    const { id, events } = await newConversation(fx.client, { workspace: dir });
    const started = Date.now();
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);
    expect(Date.now() - started).toBeLessThan(4000);
    const failed = events.of("tool_failed")[0]!;
    expect(failed.record).toMatchObject({ toolName: "slow", success: false });
    expect(failed.record.result).toBe("started\n[timed out after 300 ms]");
  });

  it("refuses arguments its schema does not allow, before running anything", async () => {
    fx.fake.enqueue({ kind: "reply", toolCalls: [{ id: "call_x", name: "lookup", args: JSON.stringify({ term: 5 }) }] }, { kind: "reply", text: ["ok"] });
    const { id, events } = await newConversation(fx.client, { workspace: dir });
    const { generationId } = await fx.client.step({ conversationId: id, autoConfirm: true });
    await events.waitForEnd(generationId);
    expect(events.of("tool_failed")[0]!.record.result).toBe("Invalid arguments:\nterm: Invalid input: expected string, received number");
    expect(events.of("tool_output")).toEqual([]);
  });
});
