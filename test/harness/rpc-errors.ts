/**
 * Assertions on errors answered by the server, through the generated client.
 */
import { expect } from "vitest";
import { AgentwireRpcError } from "../../clients/typescript/index.js";

/** The AgentwireRpcError the promise rejects with; fails the test if it resolves or fails otherwise. */
export async function rpcError(promise: Promise<unknown>): Promise<AgentwireRpcError> {
  let outcome: unknown;
  try {
    outcome = await promise;
  } catch (error) {
    expect(error, "expected an error answered by the server").toBeInstanceOf(AgentwireRpcError);
    return error as AgentwireRpcError;
  }
  throw new Error(`expected a JSON-RPC error, got the result ${JSON.stringify(outcome)}`);
}

/** -32602 whose message names `field` and whose `data.issues` holds an issue at that path. */
export async function expectInvalidParams(promise: Promise<unknown>, field: string): Promise<AgentwireRpcError> {
  const error = await rpcError(promise);
  expect(error.code, error.message).toBe(-32602);
  expect(error.message).toContain(field);
  const issues = (error.data as { issues?: { path: string; message: string }[] } | undefined)?.issues;
  expect(Array.isArray(issues), "data.issues is a list").toBe(true);
  expect(issues!.map((i) => i.path)).toContain(field);
  for (const issue of issues!) expect(typeof issue.message).toBe("string");
  return error;
}

/** -32010 CONVERSATION_NOT_FOUND naming the id. */
export async function expectNotFound(promise: Promise<unknown>, conversationId: string): Promise<void> {
  const error = await rpcError(promise);
  expect(error.code, error.message).toBe(-32010);
  expect(error.message).toContain(conversationId);
}
