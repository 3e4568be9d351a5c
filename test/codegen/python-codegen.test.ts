/**
 * The Python emitter's own rules, without a Python interpreter: how schemas
 * become Python types (hoisted TypedDicts named by their discriminator, a
 * shape met twice named once, NotRequired, Literal, docstrings that cannot
 * break out of their quotes), and what it refuses loudly instead of emitting
 * something wrong (unknown keywords, a method named like a runtime member).
 * test/clients/python-client.test.ts runs the real output.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { notifications, requests } from "../../protocol/inventory.js";
import type { ClientInventory } from "../../src/codegen/client-types.js";
import { emitPythonMethods, emitPythonTypes, readRuntime, runtimeNames } from "../../src/codegen/python-emitter.js";
import { docstring, importOrder, PyTypeWriter } from "../../src/codegen/python-types.js";
import { NamedTypes } from "../../src/codegen/ts-types.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function typesOf(name: string, schema: Record<string, unknown>): string {
  const writer = new PyTypeWriter(new NamedTypes({}));
  writer.define(name, schema);
  return importOrder(writer.definitions)
    .map((d) => d.lines.join("\n"))
    .join("\n\n");
}

describe("schema → Python types", () => {
  it("hoists tagged union branches by discriminator, reuses a repeated shape, marks optional keys NotRequired", () => {
    const file = { type: "object", properties: { type: { const: "file" }, path: { type: "string" } }, required: ["type", "path"] };
    const image = { type: "object", properties: { type: { const: "image" }, id: { type: "string" } }, required: ["type", "id"] };
    const text = typesOf("Params", {
      type: "object",
      properties: {
        items: { type: "array", items: { anyOf: [file, image] } },
        again: { type: "array", items: { anyOf: [file, image] } },
        mode: { type: "string", enum: ["a", "b"], description: "The mode." },
        note: { anyOf: [{ type: "string" }, { type: "null" }] },
      },
      required: ["items", "mode"],
    });
    expect(text).toContain("class ParamsItemsItemFile(TypedDict):");
    expect(text).toContain("class ParamsItemsItemImage(TypedDict):");
    expect(text).not.toContain("ParamsAgainItem"); // the same shape is named once
    expect(text).toContain("    items: list[ParamsItemsItemFile | ParamsItemsItemImage]");
    expect(text).toContain("    again: NotRequired[list[ParamsItemsItemFile | ParamsItemsItemImage]]");
    expect(text).toContain('    mode: Literal["a", "b"]\n    """The mode."""');
    expect(text).toContain("    note: NotRequired[str | None]");
    // Dependencies come first: types.py evaluates its annotations at import.
    expect(text.indexOf("class ParamsItemsItemFile")).toBeLessThan(text.indexOf("class Params("));
  });

  it("refuses a keyword it cannot express instead of dropping it", () => {
    expect(() => typesOf("X", { type: "object", properties: { a: { not: { type: "string" } } } })).toThrow(/XA uses not/);
    expect(() => typesOf("X", { type: "object", properties: { from: { type: "string" } } })).toThrow(/not a Python identifier/);
  });

  it("docstrings escape backslashes and triple quotes, and wrap at 100 columns", () => {
    const lines = docstring(['A \\d+ pattern and """quotes""", ' + "word ".repeat(40)], "    ");
    const text = lines.join("\n");
    expect(text).toContain("\\\\d+");
    expect(text).toContain('\\"\\"\\"quotes');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(100);
    expect(docstring(['ends in "quoted"'], "")).toEqual(['"""ends in "quoted" """']);
  });
});

describe("methods.py", () => {
  const runtime = readRuntime(root);

  it("knows the runtime's members, so a method can never shadow one", () => {
    const names = runtimeNames(runtime);
    for (const name of ["request", "on", "on_any", "on_close", "close", "closed", "connection_id", "_handshake", "_pending", "connect", "events", "_event_stream"]) {
      expect(names, name).toContain(name);
    }
    const inventory: ClientInventory = {
      requests: { ...requests, close: { ...requests.interrupt, description: "A method named like the runtime's close." } },
      notifications,
    };
    expect(() => emitPythonMethods("1.0", runtime, inventory)).toThrow(/close.*runtime\.py/);
  });

  it("groups by prefix, leaves initialize to connect, and sends {} for a method without params", () => {
    const text = emitPythonMethods("1.0", runtime);
    expect(text).toContain("class ConversationMethods:");
    expect(text).toContain("    @cached_property\n    def conversation(self) -> ConversationMethods:");
    expect(text).toContain("    async def get(self, params: ConversationGetParams, *, timeout: float | None = None) -> ConversationGetResult:");
    expect(text).toContain('result = await self._client.request("tools.list", {}, timeout=timeout)');
    expect(text).not.toMatch(/def initialize\(/);
    expect(text).toContain('    def on(self, method: Literal["tool_pending"], handler: Callable[[ToolPendingNotification]');
  });

  it("types events() by the notifications that name a conversation: a tagged TypedDict each, their union", () => {
    const types = emitPythonTypes("1.0");
    expect(types).toContain('class ToolPendingEvent(TypedDict):');
    expect(types).toContain('    method: Literal["tool_pending"]\n    params: ToolPendingNotification');
    const union = /^ConversationEvent: TypeAlias = (.*)$/m.exec(types)?.[1]?.split(" | ");
    const named = Object.keys(notifications).filter((m) => m !== "connected");
    expect(union).toEqual(named.map((m) => `${m.split("_").map((p) => p[0]!.toUpperCase() + p.slice(1)).join("")}Event`));
    expect(types).not.toContain("ConnectedEvent"); // `connected` names no conversation
    const text = emitPythonMethods("1.0", runtime);
    expect(text).toContain("    def events(self, conversation_id: str, *, max_buffer: int = DEFAULT_EVENT_BUFFER) -> EventStream[ConversationEvent]:");
  });

  it("marks an experimental method in its docstring, and refuses a member named like a Python keyword", () => {
    const lab = (member: string): ClientInventory => ({
      requests: {
        ...requests,
        [`lab.${member}`]: { params: z.object({ x: z.string() }), result: z.object({}), description: "Try.", errors: [], experimental: "shape may change" },
      },
      notifications,
    });
    const text = emitPythonMethods("1.0", runtime, lab("probe"));
    expect(text).toContain("class LabMethods:");
    expect(text).toContain("Experimental: shape may change");
    expect(() => emitPythonMethods("1.0", runtime, lab("try"))).toThrow(/lab\.try would become a method named try, a Python keyword/);
  });
});
