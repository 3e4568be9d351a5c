/**
 * Which members a generated client has: one method per request of the
 * inventory, grouped by its dotted prefix (`conversation.create` →
 * `client.conversation.create`), `initialize` left to `connect`. Shared by
 * the TypeScript and Python emitters; each says how a segment is spelt in
 * its language and which names it cannot use.
 */
import { ErrorCodes } from "../../protocol/errors.js";
import { requestTypeNames, type RequestEntry } from "../../protocol/inventory.js";
import type { ClientInventory } from "./client-types.js";
import { toJsonSchema } from "./json-schema.js";
import { methodErrors } from "./openrpc.js";

const HANDSHAKE_METHODS: ReadonlySet<string> = new Set(["initialize"]);

export interface MethodPlan {
  method: string;
  /** Member name: `create` in `client.conversation.create`, `step` for `client.step`. */
  member: string;
  /** "none": no argument; "optional": `{}` is valid params; "required" otherwise. */
  params: "none" | "optional" | "required";
  paramsType: string;
  resultType: string;
  /** Doc paragraphs: the description, the errors, and the experimental note if any. */
  doc: string[];
}

export interface Group {
  name: string;
  methods: MethodPlan[];
}

export interface MemberNaming {
  /** Starts every error message, e.g. "codegen" or "codegen (python)". */
  label: string;
  /** A dotted segment of a method name as a member name of the language. */
  spell(segment: string): string;
  /** Names the hand-written runtime already uses on the client; `runtime` names it in messages. */
  reserved: ReadonlySet<string>;
  runtime: string;
  /** Why a method cannot be named `name` in the language (a keyword), or undefined. */
  refuseMethodName?(name: string): string | undefined;
  /** The doc paragraphs that mark an experimental method. */
  experimental(entry: RequestEntry): string[];
}

export function planClientMembers(inventory: ClientInventory, naming: MemberNaming): Array<MethodPlan | Group> {
  const { label } = naming;
  const members: Array<MethodPlan | Group> = [];
  const groups = new Map<string, Group>();
  const check = (name: string, method: string) => {
    if (naming.reserved.has(name)) throw new Error(`${label}: ${method} would become client.${name}, which ${naming.runtime} already uses`);
    const refused = naming.refuseMethodName?.(name);
    if (refused) throw new Error(`${label}: ${method} would become client.${name}, ${refused}`);
  };
  for (const [method, entry] of Object.entries(inventory.requests)) {
    if (HANDSHAKE_METHODS.has(method)) continue;
    const segments = method.split(".").map(naming.spell);
    if (segments.length > 2) throw new Error(`${label}: ${method}: only one level of dotted prefix is supported`);
    const plan = planMethod(method, entry, segments[segments.length - 1]!, naming);
    const refused = naming.refuseMethodName?.(plan.member);
    if (refused) throw new Error(`${label}: ${method} would become a method named ${plan.member}, ${refused}`);
    if (segments.length === 1) {
      check(plan.member, method);
      if (groups.has(plan.member)) throw new Error(`${label}: ${method} collides with the ${plan.member}.* group`);
      members.push(plan);
      continue;
    }
    const groupName = segments[0]!;
    let group = groups.get(groupName);
    if (!group) {
      check(groupName, method);
      if (members.some((m) => !("methods" in m) && m.member === groupName)) {
        throw new Error(`${label}: the ${groupName}.* group collides with the method ${groupName}`);
      }
      group = { name: groupName, methods: [] };
      groups.set(groupName, group);
      members.push(group);
    }
    if (group.methods.some((m) => m.member === plan.member)) throw new Error(`${label}: ${method} is named twice`);
    group.methods.push(plan);
  }
  return members;
}

function planMethod(method: string, entry: RequestEntry, member: string, naming: MemberNaming): MethodPlan {
  const schema = toJsonSchema(entry.params, "input", `${method} params`);
  const hasFields = Object.keys((schema.properties ?? {}) as object).length > 0;
  const params = !hasFields ? "none" : entry.params.safeParse({}).success ? "optional" : "required";
  const errors = methodErrors(method, entry).map((name) => `${name} (${ErrorCodes[name]})`);
  return {
    method,
    member,
    params,
    paramsType: requestTypeNames(method).params,
    resultType: requestTypeNames(method).result,
    doc: [`\`${method}\`: ${entry.description}`, "", `Errors: ${errors.join(", ")}.`, ...naming.experimental(entry)],
  };
}
