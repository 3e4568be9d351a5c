/**
 * Emits the generated files of the Python client (clients/python/agentwire_client/):
 * types.py (a TypedDict per request's params and result, per notification and
 * per shared record), errors.py (the error code table) and methods.py
 * (`AgentwireClient`: one async method per request, grouped by the dotted
 * prefix as in the TypeScript client — `conversation.create` →
 * `client.conversation.create(params, timeout=…)` — and typed `on` overloads
 * per notification). Connection handling is the hand-written runtime.py.
 *
 * Built from the same JSON Schema and the same inventory as the TypeScript
 * client (client-types.ts, client-emitter.ts), so the two name the same types.
 */
import { readFileSync } from "node:fs";
import { ErrorTable } from "../../protocol/errors.js";
import { notificationTypeName, requestTypeNames } from "../../protocol/inventory.js";
import { planClientMembers, type Group, type MethodPlan } from "./client-members.js";
import { protocolInventory, sharedTypes, type ClientInventory } from "./client-types.js";
import { GENERATED_NOTE, toJsonSchema } from "./json-schema.js";
import { docstring, importOrder, isPythonKeyword, PyTypeWriter, snake } from "./python-types.js";
import { NamedTypes } from "./ts-types.js";

/** The package folder, from the repository root. */
export const PYTHON_PACKAGE = "clients/python/agentwire_client";

const PY_BANNER = `# ${GENERATED_NOTE}`;

/** types.py's union of every conversation notification as `{"method", "params"}`: what `events()` yields. */
const CONVERSATION_EVENT = "ConversationEvent";

/** `generation_progress` → `GenerationProgressEvent`: the `{"method", "params"}` TypedDict of one notification. */
function eventTypeName(method: string): string {
  return notificationTypeName(method).replace(/Notification$/, "Event");
}

/** clients/python/agentwire_client/types.py */
export function emitPythonTypes(protocolVersion: string, inventory: ClientInventory = protocolInventory): string {
  const shared = sharedTypes();
  const writer = new PyTypeWriter(new NamedTypes(shared));
  for (const [name, schema] of Object.entries(shared)) writer.define(name, schema);
  const leadFor = (schema: Record<string, unknown>, method: string, what: string) =>
    typeof schema.description === "string" && schema.description.includes(method) ? [] : [`${what} of \`${method}\`.`];
  for (const [method, entry] of Object.entries(inventory.requests)) {
    const names = requestTypeNames(method);
    const params = toJsonSchema(entry.params, "input", `${method} params`);
    const result = toJsonSchema(entry.result, "output", `${method} result`);
    writer.define(names.params, params, leadFor(params, method, "Params"));
    writer.define(names.result, result, leadFor(result, method, "Result"));
  }
  const conversationEvents: string[] = [];
  for (const [method, entry] of Object.entries(inventory.notifications)) {
    const params = toJsonSchema(entry.params, "output", `${method} notification`);
    writer.define(notificationTypeName(method), params, [`Params of the \`${method}\` notification: ${entry.description}`]);
    // A notification that can name a conversation is one `events(conversation_id)` may yield (runtime.py
    // routes by the params' conversationId).
    if ("conversationId" in ((params.properties ?? {}) as object)) conversationEvents.push(method);
  }
  for (const method of conversationEvents) {
    const name = eventTypeName(method);
    writer.add({
      name,
      lines: [
        `class ${name}(TypedDict):`,
        ...docstring([`A \`${method}\` notification, as \`events()\` yields it.`], "    "),
        "",
        `    method: Literal[${JSON.stringify(method)}]`,
        `    params: ${notificationTypeName(method)}`,
      ],
      needs: [notificationTypeName(method)],
    });
  }
  writer.add({
    name: CONVERSATION_EVENT,
    lines: [
      `${CONVERSATION_EVENT}: TypeAlias = ${conversationEvents.map(eventTypeName).join(" | ")}`,
      ...docstring(
        [
          "What `client.events(conversation_id)` yields: one notification of the conversation as" +
            ' `{"method": ..., "params": ...}`. Comparing `event["method"]` with a method name narrows `params`' +
            " to that notification's TypedDict.",
        ],
        "",
      ),
    ],
    needs: conversationEvents.map(eventTypeName),
  });
  const notificationNames = Object.keys(inventory.notifications);
  const out = [
    PY_BANNER,
    ...docstring(
      [
        `Types of the agentwire protocol ${protocolVersion}, generated from protocol/ (zod → JSON Schema → Python):` +
          " a TypedDict for the params and result of every request, the params of every notification and the" +
          " shared records. Keys are the wire's (camelCase); optional ones are NotRequired. Constraints Python" +
          " types cannot express (patterns, bounds, formats) are @-tags in the docstrings.",
      ],
      "",
    ),
    "",
    "from typing import Any, Literal, NotRequired, TypeAlias, TypedDict",
    "",
    `PROTOCOL_VERSION = ${JSON.stringify(protocolVersion)}`,
    '"""The protocol version this client speaks, sent in initialize; a server of another major refuses it."""',
    "",
    `NotificationMethod: TypeAlias = Literal[${notificationNames.map((n) => JSON.stringify(n)).join(", ")}]`,
    '"""Every notification the server may send."""',
    "",
    `NOTIFICATION_METHODS: tuple[NotificationMethod, ...] = (${notificationNames.map((n) => JSON.stringify(n)).join(", ")},)`,
  ];
  for (const definition of importOrder(writer.definitions)) out.push("", "", ...definition.lines);
  out.push("");
  return out.join("\n");
}

/** clients/python/agentwire_client/errors.py: the error code table and `is_rpc_error`. */
export function emitPythonErrors(): string {
  const out = [
    PY_BANNER,
    ...docstring(
      [
        "Every error code the server can answer with. Local failures (socket closed, timeout) are" +
          " AgentwireConnectionError with string codes instead.",
        "",
        "```",
        "try:",
        '    await client.conversation.get({"conversationId": "c_missing"})',
        "except AgentwireRpcError as error:",
        '    if is_rpc_error(error, "CONVERSATION_NOT_FOUND"):',
        '        print(error.data["conversationId"])',
        "```",
      ],
      "",
    ),
    "",
    "from __future__ import annotations",
    "",
    "from typing import Literal",
    "",
    "from .runtime import AgentwireRpcError",
    "",
    `ErrorCodeName = Literal[${Object.keys(ErrorTable).map((n) => JSON.stringify(n)).join(", ")}]`,
    "",
    "",
    "class ErrorCodes:",
    ...docstring(
      ["Error codes, by name. Standard JSON-RPC 2.0 codes first; application codes live in the reserved server range -32000…-32099."],
      "    ",
    ),
    "",
  ];
  for (const [name, { code, doc }] of Object.entries(ErrorTable)) out.push(`    ${name} = ${code}`, ...docstring([doc], "    "));
  out.push(
    "",
    "",
    "def is_rpc_error(error: BaseException, name: ErrorCodeName) -> bool:",
    '    """True when `error` is the server\'s error `name` (compared by code)."""',
    "    return isinstance(error, AgentwireRpcError) and error.code == getattr(ErrorCodes, name)",
    "",
  );
  return out.join("\n");
}

/**
 * clients/python/agentwire_client/methods.py. `runtimeSource` is runtime.py's
 * text: the names it defines on the client may not be taken by a generated member.
 */
export function emitPythonMethods(
  protocolVersion: string,
  runtimeSource: string,
  inventory: ClientInventory = protocolInventory,
): string {
  const members = planMembers(inventory, runtimeNames(runtimeSource));
  const plans = members.flatMap((m) => ("methods" in m ? m.methods : [m]));
  const notifications = Object.keys(inventory.notifications);
  const typeNames = [
    ...new Set([
      ...plans.flatMap((p) => (p.params === "none" ? [p.resultType] : [p.paramsType, p.resultType])),
      ...notifications.map(notificationTypeName),
      CONVERSATION_EVENT,
    ]),
  ].sort();
  const out = [
    PY_BANNER,
    ...docstring(
      [
        `Typed client for the agentwire protocol ${protocolVersion}: one async method per request of` +
          " protocol/inventory.ts, grouped by its dotted prefix, each taking its params (a dict: the TypedDict" +
          " of types.py) and an optional per-call `timeout` in seconds. Connection handling lives in" +
          " runtime.py (hand-written).",
        "",
        "```",
        'async with AgentwireClient.connect("ws://127.0.0.1:7700", token=token) as client:',
        '    conversation = await client.conversation.create({"title": "demo"})',
        '    client.on("message_added", lambda n: print(n["record"]["content"]))',
        '    async for event in client.events(conversation["id"]):',
        "        ...",
        "```",
      ],
      "",
    ),
    "",
    "from __future__ import annotations",
    "",
    "from functools import cached_property",
    "from typing import Any, Callable, Literal, cast, overload",
    "",
    "from .runtime import DEFAULT_EVENT_BUFFER, AgentwireClientBase, Disposer, EventStream",
    "from .types import (",
    "    PROTOCOL_VERSION,",
    ...typeNames.map((name) => `    ${name},`),
    ")",
    "",
    "Handler = Callable[[Any], Any]",
  ];
  for (const member of members) if ("methods" in member) out.push("", "", ...emitGroupClass(member));

  out.push(
    "",
    "",
    "class AgentwireClient(AgentwireClientBase):",
    ...docstring(
      [
        "A connected agentwire client. Create it with `await AgentwireClient.connect(url, ...)` or" +
          " `async with AgentwireClient.connect(url, ...) as client:` (closed when the block exits); every" +
          " method sends one request and returns its result, or raises AgentwireRpcError (server errors," +
          " `code` from ErrorCodes) or AgentwireConnectionError (CONNECTION_CLOSED, TIMEOUT).",
      ],
      "    ",
    ),
    "",
    "    _protocol_version = PROTOCOL_VERSION",
  );
  for (const member of members) {
    if (!("methods" in member)) continue;
    out.push(
      "",
      "    @cached_property",
      `    def ${member.name}(self) -> ${groupClassName(member.name)}:`,
      ...docstring([`${member.name}.* requests.`], "        "),
      `        return ${groupClassName(member.name)}(self)`,
    );
  }
  for (const member of members) if (!("methods" in member)) out.push("", ...emitMethod(member, "    ", "self"));

  out.push(
    "",
    `    def events(self, conversation_id: str, *, max_buffer: int = DEFAULT_EVENT_BUFFER) -> EventStream[${CONVERSATION_EVENT}]:`,
    ...docstring(
      [
        "The notifications of `conversation_id` from now on, as an async iterator of" +
          ` ${CONVERSATION_EVENT} (\`{"method": ..., "params": ...}\`; comparing \`event["method"]\` narrows` +
          " `params` to that notification's TypedDict). Subscribe to the conversation for its events to come;" +
          " call this before `step` so none is missed. At most `max_buffer` unread notifications are held: one" +
          " more ends the stream with AgentwireEventOverflowError once the held ones are read, never a silent" +
          " drop. The iteration ends when the connection closes (with AgentwireConnectionError if the server or" +
          " the network closed it) or the stream's `close()` is called; EventStream in runtime.py has the" +
          " details.",
        "",
        "```",
        "async with client.events(conversation_id) as events:",
        '    await client.step({"conversationId": conversation_id})',
        "    async for event in events:",
        '        if event["method"] == "generation_progress":',
        '            print(event["params"]["delta"], end="")',
        '        elif event["method"] == "generation_complete" and event["params"]["final"]:',
        "            break",
        "```",
      ],
      "        ",
    ),
    "        return self._event_stream(conversation_id, max_buffer)",
  );


  // Typed `on`: one overload per notification, so a handler's argument is that notification's TypedDict.
  for (const method of notifications) {
    out.push(
      "",
      "    @overload",
      `    def on(self, method: Literal[${JSON.stringify(method)}], handler: Callable[[${notificationTypeName(method)}], object]) -> Disposer: ...`,
    );
  }
  out.push(
    "",
    "    @overload",
    "    def on(self, method: str, handler: Handler) -> Disposer: ...",
    "",
    "    def on(self, method: str, handler: Handler) -> Disposer:",
    ...docstring(
      [
        "Call `handler` with the params of every `method` notification until the returned disposer is" +
          " called. A coroutine function works too: each call runs as a task.",
      ],
      "        ",
    ),
    "        return super().on(method, handler)",
    "",
  );
  return out.join("\n");
}

/** Names runtime.py defines on AgentwireClientBase (methods, properties, attributes), which generated members must not shadow. */
export function runtimeNames(source: string): Set<string> {
  const start = source.indexOf("class AgentwireClientBase");
  if (start === -1) throw new Error("codegen (python): runtime.py has no class AgentwireClientBase");
  const next = source.indexOf("\nclass ", start + 1);
  const body = source.slice(start, next === -1 ? undefined : next);
  // events() is written by methods.py itself, beside the requests: no request may take its name either.
  const names = new Set(["connect", "events"]);
  for (const match of body.matchAll(/^ {4}(?:async )?def (\w+)/gm)) names.add(match[1]);
  for (const match of body.matchAll(/self\.(\w+)\s*(?::[^=\n]*)?=/g)) names.add(match[1]);
  return names;
}

/** The hand-written runtime.py, read where `renderOutputs` runs. */
export function readRuntime(root: string): string {
  return readFileSync(`${root}/${PYTHON_PACKAGE}/runtime.py`, "utf8");
}

function planMembers(inventory: ClientInventory, reserved: Set<string>): Array<MethodPlan | Group> {
  return planClientMembers(inventory, {
    label: "codegen (python)",
    spell: snake,
    reserved,
    runtime: "runtime.py",
    refuseMethodName: (name) => (isPythonKeyword(name) ? "a Python keyword" : undefined),
    experimental: (entry) => (entry.experimental ? ["", `Experimental: ${entry.experimental}`] : []),
  });
}

function emitGroupClass(group: Group): string[] {
  const out = [
    `class ${groupClassName(group.name)}:`,
    ...docstring([`The ${group.name}.* requests, as \`client.${group.name}.<name>(...)\`.`], "    "),
    "",
    "    def __init__(self, client: AgentwireClientBase) -> None:",
    "        self._client = client",
  ];
  for (const plan of group.methods) out.push("", ...emitMethod(plan, "    ", "self._client"));
  return out;
}

/** `async def member(self, params, *, timeout=None) -> Result:` sending the request through `client`. */
function emitMethod(plan: MethodPlan, indent: string, client: string): string[] {
  const params =
    plan.params === "none" ? [] : [plan.params === "optional" ? `params: ${plan.paramsType} | None = None` : `params: ${plan.paramsType}`];
  const signature = ["self", ...params, "*", "timeout: float | None = None"].join(", ");
  // A method without params still sends `{}`: the protocol's params are always an object.
  const sent = plan.params === "none" ? "{}" : "params";
  return [
    `${indent}async def ${plan.member}(${signature}) -> ${plan.resultType}:`,
    ...docstring(plan.doc, `${indent}    `),
    `${indent}    result = await ${client}.request(${JSON.stringify(plan.method)}, ${sent}, timeout=timeout)`,
    `${indent}    return cast(${plan.resultType}, result)`,
  ];
}

function groupClassName(group: string): string {
  return `${group[0].toUpperCase()}${group.slice(1).replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())}Methods`;
}

