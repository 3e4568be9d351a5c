/**
 * The generated Python client (clients/python/) against a running server: a
 * real agentwire server on 127.0.0.1, the fake OpenAI-compatible model
 * reached through the real openai SDK, and the scripts of test/fixtures/python/
 * run by python3 as child processes. Each script prints what it saw; this
 * file checks it against the server's own records and what the model was sent.
 * The package is also installed the way docs/clients.md says (pip, into a
 * venv) and its example, clients/python/examples/chat.py, run from there and
 * type-checked with `mypy --strict`.
 *
 * Needs python3 with the `websockets` package, and for the type checks Debian's
 * `mypy` (.ci/run installs both); each part skips, saying so, without them.
 * Every interpreter found with websockets runs the scripts, so Debian's older
 * websockets (10.4) and a current one are both covered where both are installed.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useAgentFixture } from "../harness/agent-fixture.js";
import { cleanEnv } from "../harness/child-env.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const clientDir = join(root, "clients/python");
const script = join(root, "test/fixtures/python/roundtrip.py");
const eventsScript = join(root, "test/fixtures/python/events.py");
const example = join(clientDir, "examples/chat.py");
// Bytecode (py_compile writes it even when told not to) goes here, never next to the sources.
const pycache = mkdtempSync(join(tmpdir(), "agentwire-pycache-"));
// One mypy cache for the file's mypy runs: the standard library's stubs are analysed once, not once
// per run (about 4 s each); mypy re-checks whatever changed, and the results are the same.
const mypyCache = mkdtempSync(join(tmpdir(), "agentwire-mypy-cache-"));
afterAll(() => {
  rmSync(pycache, { recursive: true, force: true });
  rmSync(mypyCache, { recursive: true, force: true });
});

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

/** Debian's mypy (apt-get install mypy), when installed: it type-checks the package and the example. */
const mypy = spawnSync("mypy", ["--version"], { encoding: "utf8", timeout: 10_000 }).status === 0 ? "mypy" : undefined;
if (!mypy) console.warn("python-client.test.ts: the mypy --strict checks are skipped, no mypy here (.ci/run installs Debian's)");

/** An interpreter that can make a venv with pip and build the package offline (Debian: python3-venv, python3-setuptools). */
const installer = pythons.find(
  ({ executable }) => spawnSync(executable, ["-c", "import ensurepip, venv, setuptools"], { timeout: 10_000 }).status === 0,
);
if (pythons.length > 0 && !installer) console.warn("python-client.test.ts: the install test is skipped, no python3 with venv, ensurepip and setuptools here");

interface RunOptions {
  timeoutMs?: number;
  cwd?: string;
  /** Put clients/python on PYTHONPATH (default): false runs what is installed. */
  source?: boolean;
}

function run(command: string, args: string[], options: RunOptions = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { timeoutMs = 20_000, cwd, source = true } = options;
  return new Promise((resolvePromise, reject) => {
    const env = cleanEnv({ PYTHONDONTWRITEBYTECODE: "1", PYTHONPYCACHEPREFIX: pycache, PIP_DISABLE_PIP_VERSION_CHECK: "1" });
    if (source) env.PYTHONPATH = clientDir;
    else delete env.PYTHONPATH;
    const child = spawn(command, args, { env, cwd });
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

  it.each(pythons)("events() and context-manager connect with $command (websockets $version)", async ({ executable }) => {
    fx.fake.enqueue({ kind: "reply", text: ["Streamed ", "to the ", "iterator."] });
    const { code, stdout, stderr } = await run(executable, [eventsScript, fx.server.url]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const out = JSON.parse(stdout);

    // The stream held the step's notifications, in order, only of its conversation, typed by method.
    const methods = out.events.map((e: { method: string }) => e.method);
    expect(methods[0]).toBe("message_added");
    expect(methods).toEqual(expect.arrayContaining(["generation_started", "generation_progress", "generation_complete"]));
    expect(methods.at(-1)).toBe("generation_complete");
    const conversationId = out.events[0].conversationId;
    expect(out.events.every((e: { conversationId: string }) => e.conversationId === conversationId)).toBe(true);
    const seqs = out.events.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(out.text).toBe("Streamed to the iterator.");
    expect(out.callbacks).toBe(out.text); // the on() callbacks still run beside the stream
    const stored = await fx.client.conversation.get({ conversationId, includeRecords: true });
    expect(stored.records!.map((r) => (r.type === "message" ? r.content : r.type))).toEqual(["hello", "Streamed to the iterator."]);

    // `async with connect()` closed the client on exit, and its close ended every stream cleanly.
    expect(out.closedOnExit).toBe(true);
    expect(out.waitingReader.ended).toBe("cleanly");
    expect(out.secondReader).toEqual({ methods: [], ended: "cleanly" });
    expect(out.afterClose).toEqual({ methods: [], ended: "cleanly" });

    // A full buffer: the held events first, then a clear error naming the limit and the last seq read.
    expect(out.overflow).toMatchObject({
      methods: ["message_added", "message_added"],
      ended: "AgentwireEventOverflowError",
      max_buffer: 2,
      last_seq: out.seqs[1],
    });
    expect(out.overflow.message).toContain("max_buffer");
    // The other streams of that conversation were unaffected; close() ends a waiting reader, and drops what is held.
    expect(out.closedEarlyPending).toBe(3);
    expect(out.closedEarly).toEqual({ methods: ["message_added", "message_added", "message_added"], ended: "cleanly" });
    expect(out.discardedPending).toBe(3);
    expect(out.discarded).toEqual({ methods: [], ended: "cleanly" });
    expect(out.closedOnError).toBe(true);
    expect(out.zeroBuffer).toMatch(/max_buffer must be at least 1/);

    // A server that hangs up: what came is read, then the connection's error, not a clean end.
    expect(out.hungUp).toMatchObject({ methods: ["message_added"], ended: "AgentwireConnectionError", code: "CONNECTION_CLOSED" });
    expect(out.hungUp.message).toContain("4000");
  }, PYTHON_TEST_MS);

  it("the clients guide shows clients/python/examples/chat.py as it is, and it runs: streams the answer, confirms the tool call", async () => {
    const guide = readFileSync(join(root, "docs/clients.md"), "utf8");
    const shown = /\n<!-- block: python -->\n```python\n([\s\S]*?)```/.exec(guide.slice(guide.indexOf("## Python")))?.[1];
    expect(shown, "docs/clients.md's ## Python section has a python block").toBeDefined();
    expect(shown).toBe(readFileSync(example, "utf8"));
    expect(shown).toContain("ws://127.0.0.1:8765");
    fx.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "call_readme", name: "shell", args: JSON.stringify({ command: "echo readme-ran" }) }] },
      { kind: "reply", text: ["It holds ", "README.md."] },
    );
    // Run as the docs-blocks test runs every python block: the source, on PYTHONPATH, its port swapped.
    const { code, stdout, stderr } = await run(pythons[0].executable, ["-c", shown!.replace("ws://127.0.0.1:8765", fx.server.url)]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toBe("It holds README.md.\n");
    expect(fx.fake.requests[0]!.messages.at(-1)).toMatchObject({ role: "user", content: "What is in this directory?" });
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
      // connect() takes the constructor's keywords, which are ClientOptions' keys.
      "import agentwire_client.runtime as rt",
      "kw = lambda f: sorted(p.name for p in inspect.signature(f).parameters.values() if p.kind == p.KEYWORD_ONLY)",
      "same = kw(m.AgentwireClient.connect) == kw(rt.AgentwireClientBase.__init__) == sorted(rt.ClientOptions.__annotations__)",
      "print(len(dicts), 'title' in opt, sorted(req).__repr__().replace(' ', ''), same)",
    ].join("\n");
    const typed = await run(pythons[0].executable, ["-c", check]);
    expect(typed.stderr).toBe("");
    const [count, titleOptional, required, sameOptions] = typed.stdout.trim().split(" ", 4);
    expect(Number(count)).toBeGreaterThan(50);
    expect(titleOptional).toBe("True");
    expect(required).toBe("['conversationId']");
    expect(sameOptions).toBe("True");
    expect(existsSync(join(dir, "py.typed")), "py.typed marks the package as typed").toBe(true);
  }, PYTHON_TEST_MS);

  it.skipIf(!mypy)("the package and its example pass mypy --strict, and the types are real: a misuse is an error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentwire-mypy-"));
    try {
      const clean = await run(mypy!, ["--strict", "--cache-dir", mypyCache, "agentwire_client", "examples/chat.py"], { cwd: clientDir, timeoutMs: 60_000 });
      expect(clean.stdout + clean.stderr).toMatch(/^Success: no issues found in \d+ source files\s*$/);
      expect(clean.code).toBe(0);
      // An event narrowed by its method has that notification's params; a wrong key or type is caught.
      const misuse = [
        "from agentwire_client import AgentwireClient",
        "async def main() -> None:",
        '    async with AgentwireClient.connect("ws://127.0.0.1:1", request_timeout="soon") as client:',
        '        async for event in client.events("c_1"):',
        '            if event["method"] == "generation_progress":',
        '                size: int = event["params"]["delta"]',
        '            elif event["method"] == "tool_pending":',
        '                print(event["params"]["delta"])',
        "",
      ].join("\n");
      const file = join(dir, "misuse.py");
      writeFileSync(file, misuse);
      const caught = await run(mypy!, ["--strict", "--cache-dir", mypyCache, file], { cwd: clientDir, timeoutMs: 60_000 });
      expect(caught.code).toBe(1);
      expect(caught.stdout).toContain('misuse.py:3: error: Argument "request_timeout"');
      expect(caught.stdout).toContain('misuse.py:6: error: Incompatible types in assignment (expression has type "str", variable has type "int")');
      expect(caught.stdout).toMatch(/misuse\.py:8: error: TypedDict "ToolPendingNotification" has no key "delta"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  // The install the guide documents, offline (this machine reaches no PyPI): a venv over the system's
  // websockets and setuptools, pip building the package from clients/python without an index.
  const VENV = "python3 -m venv --system-site-packages .venv";
  const PIP = "pip install --no-build-isolation --no-index ./clients/python";
  type Ran = Awaited<ReturnType<typeof run>>;
  /** The guide's two commands in a copy of clients/python (pip's build leaves build/ and *.egg-info beside the sources). */
  async function install(): Promise<{ dir: string; venv: Ran; pip?: Ran }> {
    const dir = mkdtempSync(join(tmpdir(), "agentwire-pyinstall-"));
    cpSync(clientDir, join(dir, "clients/python"), { recursive: true, filter: (from) => !/(__pycache__|\.egg-info|[/\\]build)$/.test(from) });
    const venv = await run(installer!.executable, VENV.split(" ").slice(1), { cwd: dir, source: false, timeoutMs: 60_000 });
    if (venv.code !== 0) return { dir, venv };
    const pip = await run(join(dir, ".venv/bin/python"), ["-m", ...PIP.split(" "), "--no-cache-dir", "--quiet"], { cwd: dir, source: false, timeoutMs: 60_000 });
    return { dir, venv, pip };
  }
  // Making the venv (ensurepip) and building the package take about 10 s, mostly waiting on the disk:
  // started with the file, they run while the tests above talk to the server; the test below checks
  // what both printed, as it did when it ran them itself.
  let installing: Promise<{ dir: string; venv: Ran; pip?: Ran }> | undefined;
  beforeAll(() => {
    if (!installer) return;
    installing = install();
    installing.catch(() => {}); // not unhandled meanwhile: the test awaits it and fails with its error
  });
  afterAll(async () => {
    const installed = await installing?.catch(() => undefined);
    if (installed) rmSync(installed.dir, { recursive: true, force: true });
  });
  it.skipIf(!installer)("installs with pip into a venv as the guide says; the example runs from there and passes mypy --strict", async () => {
    const guide = readFileSync(join(root, "docs/clients.md"), "utf8");
    expect(guide).toContain(VENV);
    expect(guide).toContain(`.venv/bin/${PIP}`);
    expect(guide).toContain("pip install ./clients/python");
    const { dir, venv, pip } = await installing!;
    try {
      expect(venv.stderr).toBe("");
      expect(venv.code).toBe(0);
      const python = join(dir, ".venv/bin/python");
      expect(pip!.stderr).toBe("");
      expect(pip!.code).toBe(0);

      // Installed into the venv, py.typed with it.
      const where = await run(python, ["-c", "import agentwire_client, importlib.resources as r; print(agentwire_client.__file__); print(r.files(agentwire_client).joinpath('py.typed').is_file())"], { cwd: dir, source: false });
      expect(where.stderr).toBe("");
      const [file, typed] = where.stdout.trim().split("\n");
      expect(file!.startsWith(join(dir, ".venv/"))).toBe(true);
      expect(typed).toBe("True");

      // The example, run by the venv's python from the copy, imports the installed package.
      fx.fake.enqueue(
        { kind: "reply", toolCalls: [{ id: "call_venv", name: "shell", args: JSON.stringify({ command: "echo venv-ran" }) }] },
        { kind: "reply", text: ["Installed ", "and answering."] },
      );
      const chat = await run(python, ["clients/python/examples/chat.py", fx.server.url, "Say hello from the venv"], { cwd: dir, source: false });
      expect(chat.stderr).toBe("");
      expect(chat.code).toBe(0);
      expect(chat.stdout).toBe("Installed and answering.\n");
      expect(fx.fake.requests[0]!.messages.at(-1)).toMatchObject({ role: "user", content: "Say hello from the venv" });
      expect(fx.fake.requests[1]!.messages.at(-1).content).toContain("venv-ran");

      if (!mypy) return;
      // Type-checked against the installed package (the examples folder holds no agentwire_client of its own).
      const typedCheck = await run(mypy, ["--strict", "--python-executable", python, "--cache-dir", mypyCache, "chat.py"], {
        cwd: join(dir, "clients/python/examples"),
        source: false,
        timeoutMs: 60_000,
      });
      expect(typedCheck.stdout + typedCheck.stderr).toMatch(/^Success: no issues found in 1 source file\s*$/);
      expect(typedCheck.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
