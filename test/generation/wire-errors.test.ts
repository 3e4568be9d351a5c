/**
 * The one domain→wire error map (src/generation/wire-errors.ts): each domain
 * failure has one code, whether it failed a request or ended a generation;
 * the message says what it means for what failed, and a local path never
 * reaches the client. The texts are those clients have always seen (the
 * storage fixture of ErrorNotification is one of them). A fenced write in a
 * request is OWNER_UNAVAILABLE — before the map was one, it was an internal
 * error there.
 */
import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../../protocol/index.js";
import { ContextTooLargeError } from "../../src/context/context-records.js";
import { requestError, wireError, type FailedWork } from "../../src/generation/wire-errors.js";
import { LlmError } from "../../src/llm/provider.js";
import { createLogger } from "../../src/logging/logger.js";
import { RpcError } from "../../src/rpc/rpc-error.js";
import { AssetQuotaError } from "../../src/store/asset-quota.js";
import { ConversationDamagedError } from "../../src/store/conversation-store.js";
import { FencedError } from "../../src/store/fenced-error.js";
import { StoreFileError } from "../../src/store/store-file-error.js";

const log = createLogger("silent");
const request: FailedWork = { kind: "request" };
const generation: FailedWork = { kind: "generation", generationId: "g_1" };
const disk = new StoreFileError("/home/someone/.agentwire/c_1/records.jsonl", "could not be written");
const fenced = new FencedError("c_1", 3, 4);

describe("the domain→wire error map", () => {
  it("a request that failed changed nothing, and says so", () => {
    expect(wireError(disk, request, log)).toEqual({ code: ErrorCodes.STORAGE_ERROR, message: "Storage error: the change could not be written to disk; nothing was changed" });
    expect(wireError(new ConversationDamagedError("c_1", "records.jsonl line 3 is not JSON"), request, log)).toEqual({
      code: ErrorCodes.CONVERSATION_DAMAGED,
      message: 'Conversation damaged: conversation "c_1" cannot be loaded (records.jsonl line 3 is not JSON); conversation.delete removes it',
      data: { conversationId: "c_1", problem: "records.jsonl line 3 is not JSON" },
    });
    expect(wireError(new AssetQuotaError("maxConversationAssetBytes", 10, 12, "over the quota"), request, log)).toMatchObject({
      code: ErrorCodes.LIMIT_EXCEEDED,
      data: { limit: "maxConversationAssetBytes", max: 10, actual: 12 },
    });
    expect(wireError(fenced, request, log)).toEqual({
      code: ErrorCodes.OWNER_UNAVAILABLE,
      message: "The instance that owns the conversation cannot be reached: another instance took this conversation over; nothing was changed",
      data: { conversationId: "c_1", reason: "lost" },
    });
  });

  it("a generation that failed keeps what it stored, and the endpoint's words are its own", () => {
    expect(wireError(disk, generation, log)).toEqual({ code: ErrorCodes.STORAGE_ERROR, message: "Storage error: the conversation could not be written to disk" });
    expect(wireError(fenced, generation, log)).toEqual({
      code: ErrorCodes.OWNER_UNAVAILABLE,
      message:
        "The instance that owns the conversation cannot be reached: another instance took this conversation over, so this generation was stopped; records stored before are kept",
    });
    expect(wireError(new LlmError("Rate limited.", "http", 429), generation, log)).toEqual({ code: ErrorCodes.LLM_ERROR, message: "Rate limited.", status: 429 });
    expect(wireError(new LlmError("reset", "connection"), generation, log)).toEqual({ code: ErrorCodes.LLM_ERROR, message: "reset" });
    expect(wireError(new ContextTooLargeError(900, 800), generation, log)).toEqual({
      code: ErrorCodes.LIMIT_EXCEEDED,
      message:
        "Limit exceeded: the model request would carry over 900 bytes of conversation text, over the limit of 800 (maxContextBytes); lower settings.toolHistoryRounds or continue in a new conversation",
    });
  });

  it("a fault is not mapped (the caller answers a bare internal error), and no mapped message carries a local path", () => {
    expect(wireError(new Error("ENOENT: /secret/path"), request, log)).toBeUndefined();
    expect(wireError("a string", generation, log)).toBeUndefined();
    for (const failed of [request, generation]) expect(JSON.stringify(wireError(disk, failed, log))).not.toContain("/home/someone");
  });

  it("the dispatcher gets it as an RpcError with the same code, message and data", () => {
    const rpc = requestError(log)(fenced);
    expect(rpc).toBeInstanceOf(RpcError);
    expect({ code: rpc!.code, message: rpc!.message, data: rpc!.data }).toEqual(wireError(fenced, request, log));
    expect(requestError(log)(new Error("x"))).toBeUndefined();
  });
});
