import { MAX_PENDING_INPUTS, type InputOutcome, type InputRequest } from "../../protocol/index.js";
import { RpcError } from "../rpc/rpc-error.js";
import type { InputReply } from "../tools/tool.js";

/** Endings remembered per conversation, so a late second answer learns how its question ended. */
const ENDED_KEPT = 64;

/** One open question and the one reply it will get. */
export interface OpenInput {
  readonly request: InputRequest;
  /** Stored with the run state (ask_user): offered again after a restart. MCP questions are not: their tool call ends with the process. */
  readonly durable: boolean;
  /** Set once a generation waits for the reply; a durable question loaded after a restart has none until a generation takes it. */
  attached: boolean;
  readonly reply: Promise<InputReply>;
  /** Hands the reply to whoever waits (called once the ending is durable and announced). */
  deliver(reply: InputReply): void;
}

/**
 * The questions of one conversation waiting for the user, oldest first, and
 * the endings of recent ones. Taking a question off (`take`) is
 * synchronous, so of two clients answering the same question exactly one
 * wins.
 */
export class InputRequests {
  private readonly open = new Map<string, OpenInput>();
  private readonly ended = new Map<string, InputOutcome>();

  constructor(stored: readonly InputRequest[] = []) {
    for (const request of stored) this.add(request, true, false);
  }

  get size(): number {
    return this.open.size;
  }

  /** What state.pendingInputs lists. */
  list(): InputRequest[] {
    return [...this.open.values()].map((entry) => entry.request);
  }

  /** What the run state stores. */
  durable(): InputRequest[] {
    return [...this.open.values()].filter((entry) => entry.durable).map((entry) => entry.request);
  }

  get(requestId: string): OpenInput | undefined {
    return this.open.get(requestId);
  }

  /** How a question that is no longer open ended, while it is remembered. */
  endedAs(requestId: string): InputOutcome | undefined {
    return this.ended.get(requestId);
  }

  /** Durable questions no generation waits for (left by an earlier process); the caller's generation takes them. */
  takeDetached(): OpenInput[] {
    const detached = [...this.open.values()].filter((entry) => !entry.attached);
    for (const entry of detached) entry.attached = true;
    return detached;
  }

  /** Open a question; beyond MAX_PENDING_INPUTS it is refused. */
  add(request: InputRequest, durable: boolean, attached = true): OpenInput {
    if (this.open.size >= MAX_PENDING_INPUTS) {
      throw RpcError.limitExceeded(`the conversation already has ${this.open.size} questions open, the most it holds`, "maxPendingInputs", MAX_PENDING_INPUTS);
    }
    let deliver!: (reply: InputReply) => void;
    const reply = new Promise<InputReply>((resolve) => (deliver = resolve));
    const entry: OpenInput = { request, durable, attached, reply, deliver };
    this.open.set(request.requestId, entry);
    return entry;
  }

  /** Close a question (first answer wins): throws INPUT_NOT_PENDING when it is not open. */
  take(requestId: string, outcome: InputOutcome): OpenInput {
    const entry = this.open.get(requestId);
    if (!entry) throw RpcError.inputNotPending(requestId, this.ended.get(requestId));
    this.open.delete(requestId);
    this.ended.set(requestId, outcome);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value!);
    return entry;
  }
}
