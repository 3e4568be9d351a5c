import type {
  ConversationState,
  LastError,
  NotificationMethod,
  NotificationParams,
  PendingTool,
} from "../../protocol/index.js";
import type { Logger } from "../logging/logger.js";
import type { ConversationHandle } from "../store/conversation-store.js";
import type { Connection } from "./connection.js";
import { storedPendingCalls } from "../generation/recovery.js";
import { RpcError } from "../rpc/rpc-error.js";
import { EventLog } from "./event-log.js";

/** Seqs are reserved on disk this many at a time, so no event costs a write. */
const SEQ_BLOCK = 1024;
/** Renew the reservation this far before it runs out, so the write lands before it is needed. */
const SEQ_MARGIN = 256;

/** What the runtime needs to know of a running generation (implemented by the loop). */
export interface ActiveGeneration {
  readonly id: string;
  pendingTools(): PendingTool[];
  /** Stop everything; resolves once the generation has fully ended. */
  interrupt(): Promise<void>;
  /** Stop for a server shutdown, keeping calls that have not run pending for the next process. */
  shutdown(): Promise<void>;
}

type EventPayload<N extends NotificationMethod> = Omit<NotificationParams<N>, "conversationId" | "seq" | "timestamp">;

/**
 * The live side of one loaded conversation: its event numbering, recent
 * event log, subscribers and running generation. Every event is serialized
 * once and the same string goes to every subscriber.
 */
export class ConversationRuntime {
  private seqValue: number;
  private reserved: number;
  readonly events: EventLog;
  readonly subscribers = new Set<Connection>();
  generation: ActiveGeneration | null = null;
  /** Tool uses still to run without asking; belongs to the conversation, not to a client. */
  autoConfirmRemaining = 0;
  lastError: LastError | null = null;
  deleted = false;
  /** Last time a request or an event touched it (ms since epoch), for idle unloading. */
  lastUsed = Date.now();

  constructor(
    readonly handle: ConversationHandle,
    eventLogSize: number,
    private readonly log: Logger,
  ) {
    // After a restart, numbering resumes above everything that may have been handed out.
    this.seqValue = handle.seqReserved;
    this.reserved = handle.seqReserved;
    this.events = new EventLog(eventLogSize);
  }

  /**
   * Call right before changing the conversation: a delete may have started
   * while the caller awaited, and nothing may be written after it.
   */
  assertLive(): void {
    if (this.deleted) throw RpcError.conversationNotFound(this.id);
  }

  get id(): string {
    return this.handle.conversation.id;
  }

  get seq(): number {
    return this.seqValue;
  }

  publish<N extends NotificationMethod>(method: N, payload: EventPayload<N>): number {
    const seq = ++this.seqValue;
    this.lastUsed = Date.now();
    if (seq > this.reserved - SEQ_MARGIN) this.reserve(seq + SEQ_BLOCK);
    const params = { conversationId: this.id, seq, timestamp: new Date().toISOString(), ...payload };
    const frame = JSON.stringify({ jsonrpc: "2.0", method, params });
    this.events.push({ seq, method, frame });
    for (const connection of this.subscribers) {
      if (connection.wants(method)) connection.send(frame);
    }
    return seq;
  }

  state(): ConversationState {
    return {
      generating: this.generation !== null,
      generationId: this.generation?.id ?? null,
      pendingTools:
        this.generation?.pendingTools() ??
        storedPendingCalls(this.handle.records).map((r) => ({ toolCallId: r.toolCallId, toolName: r.toolName, arguments: r.arguments })),
      autoConfirmRemaining: this.autoConfirmRemaining,
      lastError: this.lastError,
      seq: this.seqValue,
    };
  }

  private reserve(upTo: number): void {
    this.reserved = upTo;
    this.handle.reserveSeq(upTo).catch((error) => {
      this.log.error(`could not persist seq reservation of conversation ${this.id}`, error);
    });
  }
}
