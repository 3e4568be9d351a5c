/**
 * Every method's scope, walked from the inventory: a method whose params
 * carry conversationId acts on that conversation, so its scope must say
 * "conversation" — that is what makes it run on the conversation's owner in
 * cluster mode (src/handlers/scope-binding.ts). A method that forgot it would
 * still compile and silently run on whichever instance the client reached.
 * That each conversation-scoped method really runs on the owner is shown on
 * two real instances in cluster-method-scope.test.ts.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { requests, type RequestEntry } from "../../protocol/inventory.js";

const entries = Object.entries(requests as Record<string, RequestEntry>);

/** The params' own fields (every params schema is an object). */
function paramFields(entry: RequestEntry): Record<string, z.ZodType> {
  expect(entry.params).toBeInstanceOf(z.ZodObject);
  return (entry.params as z.ZodObject).shape;
}

describe("method scopes in the inventory", () => {
  it("every method declares one of the three scopes", () => {
    for (const [method, entry] of entries) expect(["conversation", "connection", "server"], method).toContain(entry.scope);
  });

  it("a method whose params carry conversationId is conversation-scoped, and a conversation-scoped one names its conversation", () => {
    const carry = entries.filter(([, entry]) => "conversationId" in paramFields(entry)).map(([method]) => method);
    const scoped = entries.filter(([, entry]) => entry.scope === "conversation").map(([method]) => method);
    expect(carry.length).toBeGreaterThan(10);
    expect(scoped).toEqual(carry);
  });

  it("only conversation-scoped methods say where they run or hold their answer, and a held answer names a numeric param", () => {
    for (const [method, entry] of entries) {
      if (entry.runsOn !== undefined || entry.holdsAnswer !== undefined) expect(entry.scope, method).toBe("conversation");
      if (entry.holdsAnswer) {
        const field = paramFields(entry)[entry.holdsAnswer.param];
        expect(field, `${method}: ${entry.holdsAnswer.param}`).toBeDefined();
        expect(field!.safeParse(1000).success, `${method}: ${entry.holdsAnswer.param} takes milliseconds`).toBe(true);
      }
    }
  });

  it("subscribe and unsubscribe run where the client is (its subscriptions live there); every other conversation method runs on the owner", () => {
    const caller = entries.filter(([, entry]) => entry.runsOn === "caller").map(([method]) => method);
    expect(caller).toEqual(["conversation.subscribe", "conversation.unsubscribe"]);
  });
});
