/**
 * Emits clients/typescript/index.ts from the inventory: `AgentwireClient`, one
 * typed method per request, grouped by the dotted prefix
 * (`conversation.create` → `client.conversation.create(params, options)`).
 * `initialize` gets no method: `connect` sends it. Types come from the
 * generated types.ts, connection handling from the hand-written runtime.ts.
 */
// The hand-written runtime, imported (not copied) to learn which member names it already uses.
import { AgentwireClientBase } from "../../clients/typescript/runtime.js";
import { planClientMembers, type Group, type MethodPlan } from "./client-members.js";
import { experimentalTag, protocolInventory, type ClientInventory } from "./client-types.js";
import { TS_BANNER } from "./json-schema.js";
import { docComment } from "./jsdoc.js";

export function emitClientIndex(protocolVersion: string, inventory: ClientInventory = protocolInventory): string {
  const members = planMembers(inventory);
  const plans = members.flatMap((m) => ("methods" in m ? m.methods : [m]));
  const typeNames = plans.flatMap((p) => (p.params === "none" ? [p.resultType] : [p.paramsType, p.resultType]));
  const out: string[] = [
    TS_BANNER,
    "/**",
    ` * Typed client for the agentwire protocol ${protocolVersion}: one method per request of`,
    " * protocol/inventory.ts, each taking its params and then optional per-call options",
    " * (`{ signal, timeoutMs }`). Connection handling lives in ./runtime.ts (hand-written), the",
    " * types in ./types.ts and the error table in ./errors.ts (generated).",
    " *",
    " * ```ts",
    ' * import { WebSocket } from "ws"; // Node 20; browsers have a global WebSocket',
    ' * const client = await AgentwireClient.connect("ws://127.0.0.1:7700", { WebSocket, token });',
    ' * client.on("message_added", (n) => console.log(n.record.content));',
    ' * const conversation = await client.conversation.create({ title: "demo" });',
    " * ```",
    " */",
    'import { AgentwireClientBase, type AgentwireClientOptions, type RequestOptions } from "./runtime.js";',
    "import {",
    "  PROTOCOL_VERSION,",
    ...typeNames.map((name) => `  type ${name},`),
    '} from "./types.js";',
    "",
    'export * from "./errors.js";',
    'export * from "./runtime.js";',
    'export * from "./types.js";',
    "",
  ];

  for (const member of members) {
    if ("methods" in member) out.push(...emitGroupInterface(member));
  }

  out.push(
    ...docComment(
      [
        "A connected agentwire client. Create it with `AgentwireClient.connect`; every method sends" +
          " one request and resolves with its result, or rejects with AgentwireRpcError (server errors," +
          " `code` from ErrorCodes; narrow with isRpcError) or AgentwireConnectionError" +
          " (CONNECTION_CLOSED, TIMEOUT, ABORTED).",
      ],
      "",
    ),
    "export class AgentwireClient extends AgentwireClientBase {",
    ...docComment(
      [
        "Open a WebSocket to `url`, send `initialize` with this client's protocol version (and" +
          " `capabilities.experimentalApi: true` when `options.experimentalApi` is set) and resolve" +
          " once the server has accepted it.",
      ],
      "  ",
    ),
    "  static async connect(url: string | URL, options: AgentwireClientOptions = {}): Promise<AgentwireClient> {",
    "    const client = new AgentwireClient(options);",
    "    await client.handshake(url, PROTOCOL_VERSION);",
    "    return client;",
    "  }",
  );
  for (const member of members) {
    out.push("");
    if ("methods" in member) {
      out.push(...docComment([`${member.name}.* requests.`], "  "));
      out.push(`  readonly ${member.name}: ${groupInterfaceName(member.name)} = {`);
      for (const plan of member.methods) out.push(`    ${plan.member}: (${args(plan)}) => ${call(plan)},`);
      out.push("  };");
    } else {
      out.push(...docComment(member.doc, "  "));
      out.push(`  ${signature(member)} {`);
      out.push(`    return ${call(member)};`);
      out.push("  }");
    }
  }
  out.push("}", "");
  return out.join("\n");
}

/** Names the runtime already uses on a client; a generated member must not shadow one. */
function reservedNames(): Set<string> {
  return new Set([
    ...Object.getOwnPropertyNames(AgentwireClientBase.prototype),
    ...Object.getOwnPropertyNames(AgentwireClientBase),
    "connect",
  ]);
}

/** Top-level members in inventory order: single methods and groups (at their first method's place). */
function planMembers(inventory: ClientInventory): Array<MethodPlan | Group> {
  return planClientMembers(inventory, {
    label: "codegen",
    spell: identifier,
    reserved: reservedNames(),
    runtime: "the runtime",
    experimental: experimentalTag,
  });
}

function emitGroupInterface(group: Group): string[] {
  const out = [
    ...docComment([`The ${group.name}.* requests, as \`client.${group.name}.<name>(...)\`.`], ""),
    `export interface ${groupInterfaceName(group.name)} {`,
  ];
  group.methods.forEach((plan, i) => {
    if (i > 0) out.push("");
    out.push(...docComment(plan.doc, "  "), `  ${signature(plan)};`);
  });
  out.push("}", "");
  return out;
}

function signature(plan: MethodPlan): string {
  const params =
    plan.params === "none" ? [] : [plan.params === "optional" ? `params?: ${plan.paramsType}` : `params: ${plan.paramsType}`];
  return `${plan.member}(${[...params, "options?: RequestOptions"].join(", ")}): Promise<${plan.resultType}>`;
}

/** The parameter list of a group member's arrow function (its types come from the interface). */
function args(plan: MethodPlan): string {
  return plan.params === "none" ? "options" : "params, options";
}

/** A method without params still sends `{}`: the protocol's params are always an object. */
function call(plan: MethodPlan): string {
  return `this.request("${plan.method}", ${plan.params === "none" ? "{}" : "params"}, options)`;
}

function groupInterfaceName(group: string): string {
  return `${group[0].toUpperCase()}${group.slice(1)}Methods`;
}

/** `tool_call` or `tool-call` → `toolCall`; anything else that is not an identifier is refused. */
function identifier(segment: string): string {
  const name = segment.replace(/[-_]+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
  if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`codegen: method segment "${segment}" is not an identifier`);
  return name;
}
