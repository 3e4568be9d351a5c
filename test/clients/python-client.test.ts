/**
 * The generated Python client (clients/python/) against a running server: a
 * real agentwire server on 127.0.0.1, the fake OpenAI-compatible model
 * reached through the real openai SDK, and test/fixtures/python/roundtrip.py
 * run by python3 as a child process. The script prints what it saw; this
 * file checks it against the server's own records and what the model was sent.
 *
 * Needs python3 with the `websockets` package (.ci/run installs it). Every
 * interpreter found with it runs the script, so Debian's older websockets
 * (10.4) and a current one are both covered where both are installed.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { useAgentFixture } from "../harness/agent-fixture.js";
import { cleanEnv } from "../harness/child-env.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const clientDir = join(root, "clients/python");
const script = join(root, "test/fixtures/python/roundtrip.py");
// Bytecode (py_compile writes it even when told not to) goes here, never next to the sources.
const pycache = mkdtempSync(join(tmpdir(), "agentwire-pycache-"));
afterAll(() => rmSync(pycache, { recursive: true, force: true }));

interface Interpreter {
  /** As found: "python3" or "/usr/bin/python3". */
  command: string;
  /** The interpreter itself (sys.executable): pyenv's python3 is a shell shim that costs a second per start. */
  executable: string;
  version: string;
}

/** python3 on PATH and Debian's, each kept when it imports websockets; the same executable once. */
function interpreters(): Interpreter[] {
  const found = new Map<string, Interpreter>();
  for (const command of ["python3", "/usr/bin/python3"]) {
    const probe = spawnSync(command, ["-c", "import sys, websockets; print(sys.executable, websockets.__version__)"], {
      encoding: "utf8",
      timeout: 10_000,
    });
    if (probe.status !== 0) continue;
    const [executable, version] = probe.stdout.trim().split(" ");
    if (!found.has(executable)) found.set(executable, { command, executable, version });
  }
  return [...found.values()];
}

const pythons = interpreters();
if (pythons.length === 0) {
  console.warn("python-client.test.ts: skipped, no python3 with the websockets package here (.ci/run installs it)");
}

function run(command: string, args: string[], timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env: cleanEnv({ PYTHONPATH: clientDir, PYTHONDONTWRITEBYTECODE: "1", PYTHONPYCACHEPREFIX: pycache }) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

// A Python start costs up to a second or two on a loaded 2-core machine; each test starts one or two.
const PYTHON_TEST_MS = 20_000;

describe.skipIf(pythons.length === 0)("the Python client", () => {
  const fx = useAgentFixture();

  it.each(pythons)("round trip with $command (websockets $version)", async ({ executable, version }) => {
    fx.fake.enqueue(
      { kind: "reply", text: ["Running it."], toolCalls: [{ id: "call_py", name: "shell", args: JSON.stringify({ command: "echo from-python" }) }] },
      { kind: "reply", text: ["Done from the model."] },
    );
    const { code, stdout, stderr } = await run(executable, [script, fx.server.url]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.websockets).toBe(version);
    expect(out.protocolVersion).toBe(fx.client.initializeResult.protocolVersion);
    expect(out.connectionId).toMatch(/\S/);

    // The tool call was offered, confirmed by the coroutine handler, ran, and the model saw its output.
    expect(out.confirmations).toEqual([{ toolName: "shell", arguments: { command: "echo from-python" }, status: "executing" }]);
    expect(out.final).toEqual({ generationId: out.generationId, final: true, finishReason: "stop" });
    const toolMessage = fx.fake.requests[1]!.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: "tool", tool_call_id: "call_py" });
    expect(toolMessage.content).toContain("from-python");

    // What the script read with conversation.get is what the server stored.
    const stored = await fx.client.conversation.get({ conversationId: out.conversation.id, includeRecords: true });
    expect(out.conversation.title).toBe("from python");
    expect(out.records.map((r: { type: string }) => r.type)).toEqual(["message", "message", "tool_call", "message"]);
    expect(out.records).toEqual(stored.records!.slice(0, 4));
    expect(out.records[2]).toMatchObject({ toolCallId: "call_py", status: "completed", success: true });
    expect(out.records[3]).toMatchObject({ role: "assistant", content: "Done from the model." });
    expect(out.state).toMatchObject({ generating: false, pendingTools: [] });
    expect(out.notifications).toEqual(
      expect.arrayContaining(["message_added", "generation_started", "tool_pending", "tool_executing", "tool_completed", "generation_complete"]),
    );
    expect(out.connected).toEqual([expect.objectContaining({ connectionId: out.connectionId })]);

    // The disposer stopped one handler only.
    expect(out.disposer.after).toBe(out.disposer.before);
    expect(out.disposer.onAnyMessageAdded).toBe(out.notifications.filter((m: string) => m === "message_added").length + 1);

    // Server errors: code, message and data.
    expect(out.notFound).toMatchObject({
      code: -32010,
      data: { conversationId: "c_does_not_exist" },
      isConversationNotFound: true,
      matchesTable: true,
    });
    expect(out.notFound.message).toMatch(/not found/i);
    expect(out.invalidParams).toEqual({ code: -32602, paths: ["role"] });

    // Local errors: a per-call timeout, a closed client, a server that hangs up under a pending call.
    expect(out.timeout.code).toBe("TIMEOUT");
    expect(out.afterTimeout).toContain("uptimeMs");
    expect(out.afterClose).toEqual({ code: "CONNECTION_CLOSED" });
    expect(out.closeInfo).toEqual([[1000, ""]]);
    expect(out.hungUp).toMatchObject({ code: "CONNECTION_CLOSED", closed: true });
    expect(out.hungUp.message).toContain("4000");
  }, PYTHON_TEST_MS);

  it("the clients guide's example runs as written: it streams the answer and confirms the tool call", async () => {
    const guide = readFileSync(join(root, "docs/clients.md"), "utf8");
    const example = /## Python\n\n<!-- block: python -->\n```python\n([\s\S]*?)```/.exec(guide)?.[1];
    expect(example, "docs/clients.md has a ## Python section opening with a python block").toBeDefined();
    expect(example).toContain("ws://127.0.0.1:8765");
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_readme", name: "shell", args: JSON.stringify({ command: "echo readme-ran" }) }] },
      { kind: "reply", text: ["It holds ", "README.md."] },
    );
    const { code, stdout, stderr } = await run(pythons[0].executable, ["-c", example!.replace("ws://127.0.0.1:8765", fx.server.url)]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toBe("It holds README.md.");
    expect(fx.fake.requests[1]!.messages.at(-1).content).toContain("readme-ran");
  }, PYTHON_TEST_MS);

  it("the generated files compile, and every TypedDict's annotations resolve", async () => {
    const dir = join(clientDir, "agentwire_client");
    const files = readdirSync(dir).filter((f) => f.endsWith(".py")).map((f) => join(dir, f));
    expect(files.map((f) => f.slice(dir.length + 1)).sort()).toEqual(["__init__.py", "errors.py", "methods.py", "runtime.py", "types.py"]);
    const compiled = await run(pythons[0].executable, ["-m", "py_compile", ...files]);
    expect(compiled.stderr).toBe("");
    expect(compiled.code).toBe(0);
    // get_type_hints evaluates every annotation: a type named but never defined fails here.
    const check = [
      "import typing, inspect, agentwire_client.types as t, agentwire_client.methods as m",
      "dicts = [v for v in vars(t).values() if isinstance(v, type) and typing.is_typeddict(v)]",
      "hints = {d.__name__: typing.get_type_hints(d) for d in dicts}",
      "for cls in [v for v in vars(m).values() if isinstance(v, type) and v.__module__ == m.__name__]:",
      "    for f in vars(cls).values():",
      "        if inspect.isfunction(f): typing.get_type_hints(f)",
      "opt = t.ConversationCreateParams.__optional_keys__",
      "req = t.ConversationGetParams.__required_keys__",
      "print(len(dicts), 'title' in opt, sorted(req))",
    ].join("\n");
    const typed = await run(pythons[0].executable, ["-c", check]);
    expect(typed.stderr).toBe("");
    const [count, titleOptional, required] = typed.stdout.trim().split(" ", 3);
    expect(Number(count)).toBeGreaterThan(50);
    expect(titleOptional).toBe("True");
    expect(required).toBe("['conversationId']");
  }, PYTHON_TEST_MS);
});
