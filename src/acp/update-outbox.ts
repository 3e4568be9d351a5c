/**
 * The session/updates waiting to be written to an editor, bounded.
 *
 * The SDK writes one frame at a time and resolves a notification only once
 * the pipe took it, so an editor that stops reading stdout stops the writes;
 * what agentwire keeps sending meanwhile waits here. Three rules keep that
 * bounded (docs/acp.md, "When the editor stops reading"):
 * - while updates wait, a streamed chunk is merged into the waiting chunk
 *   before it (same kind, same message), and an update that replaces a
 *   state (a tool's output so far, the plan, usage, the session's info, the
 *   config options, the mode, the commands) replaces the waiting one;
 * - past the limit (all sessions together), the owner is told once
 *   (`onOverflow`: the session interrupts the generation its editor started,
 *   and says so on stderr) and streamed chunks and tool output are dropped,
 *   one marker chunk taking their place;
 * - updates that change what the editor knows of a call or a session (a
 *   tool call, its status, the stop) are never dropped: they are few and
 *   each one is bounded.
 */
import type * as acp from "@agentclientprotocol/sdk";

/** Default bound of the updates waiting for the editor, all sessions together. */
export const DEFAULT_MAX_UNSENT_BYTES = 8 * 1024 * 1024;
/** A merged chunk stops growing here (one frame stays small); the next chunk starts a new one. */
const MAX_MERGED_CHARS = 64 * 1024;

/** What all sessions' outboxes hold together, against one limit (there is one stdout). */
export class UnsentBytes {
  total = 0;
  constructor(readonly limit: number = DEFAULT_MAX_UNSENT_BYTES) {}
  get over(): boolean {
    return this.total > this.limit;
  }
}

type Waiting = { update: acp.SessionUpdate; bytes: number; done: Array<() => void>; marker?: { dropped: number } };

/** Kinds whose latest update says it all: a newer one replaces a waiting one. */
const REPLACING = new Set(["plan", "usage_update", "session_info_update", "config_option_update", "current_mode_update", "available_commands_update"]);
const CHUNKS = new Set(["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]);

/** Its JSON length: the bytes it takes on stdout for ASCII text, a close estimate otherwise. */
function sizeOf(update: acp.SessionUpdate): number {
  return JSON.stringify(update).length;
}

/** A tool_call_update carrying only the output so far (no status): the next one replaces it. */
function isToolOutput(update: acp.SessionUpdate): update is acp.SessionUpdate & { sessionUpdate: "tool_call_update"; toolCallId: string } {
  return update.sessionUpdate === "tool_call_update" && update.status == null && update.rawOutput === undefined && Array.isArray(update.content);
}

function droppable(update: acp.SessionUpdate): boolean {
  return CHUNKS.has(update.sessionUpdate) || isToolOutput(update);
}

export function markerText(dropped: number): string {
  return `\n\n[agentwire acp: ${dropped} bytes of streamed output not shown: the editor was not reading]\n\n`;
}

export class UpdateOutbox {
  readonly #queue: Waiting[] = [];
  #pumping = false;
  /** The update being written (out of the queue). */
  #writing: Waiting | undefined;
  #told = false;

  constructor(
    private readonly write: (update: acp.SessionUpdate) => Promise<void>,
    private readonly budget: UnsentBytes,
    private readonly onOverflow: (unsent: number) => void,
  ) {}

  /** Queues an update; resolves when it (or what it was merged into) has been written. */
  push(update: acp.SessionUpdate): Promise<void> {
    return new Promise((resolve) => {
      if (!this.#merge(update, resolve)) {
        if (this.budget.over && droppable(update)) this.#drop(update, resolve);
        else this.#add({ update, bytes: sizeOf(update), done: [resolve] });
      }
      if (this.budget.over && !this.#told) {
        this.#told = true;
        this.onOverflow(this.budget.total);
      }
      void this.#pump();
    });
  }

  /** Everything queued so far has been written (not what comes after: a busy session still answers its prompt). */
  flushed(): Promise<void> {
    const last = this.#queue.at(-1) ?? this.#writing;
    if (!last) return Promise.resolve();
    return new Promise((resolve) => last.done.push(resolve));
  }

  /** Drops what waits (the session closed): their promises resolve. */
  clear(): void {
    for (const waiting of this.#queue.splice(0)) {
      this.budget.total -= waiting.bytes;
      for (const done of waiting.done) done();
    }
  }

  #add(waiting: Waiting): void {
    this.#queue.push(waiting);
    this.budget.total += waiting.bytes;
  }

  #merge(update: acp.SessionUpdate, resolve: () => void): boolean {
    if (this.#queue.length === 0) return false;
    const last = this.#queue.at(-1)!;
    if (CHUNKS.has(update.sessionUpdate) && last.update.sessionUpdate === update.sessionUpdate && !last.marker) {
      const a = last.update as acp.ContentChunk;
      const b = update as acp.ContentChunk;
      if (a.content.type === "text" && b.content.type === "text" && a.messageId === b.messageId && a.content.text.length < MAX_MERGED_CHARS) {
        a.content = { ...a.content, text: a.content.text + b.content.text };
        last.bytes += b.content.text.length;
        this.budget.total += b.content.text.length;
        last.done.push(resolve);
        return true;
      }
      return false;
    }
    const same = REPLACING.has(update.sessionUpdate)
      ? this.#queue.find((w) => w.update.sessionUpdate === update.sessionUpdate)
      : isToolOutput(update)
        ? this.#queue.find((w) => isToolOutput(w.update) && w.update.toolCallId === update.toolCallId)
        : undefined;
    if (!same) return false;
    const bytes = sizeOf(update);
    this.budget.total += bytes - same.bytes;
    same.update = update;
    same.bytes = bytes;
    same.done.push(resolve);
    return true;
  }

  /** Over the limit: the chunk is counted in the marker that takes the place of everything dropped since the last one left. */
  #drop(update: acp.SessionUpdate, resolve: () => void): void {
    const bytes = sizeOf(update);
    let marker = this.#queue.find((w) => w.marker);
    if (!marker) {
      marker = { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "" } }, bytes: 0, done: [], marker: { dropped: 0 } };
      this.#add(marker);
    }
    marker.marker!.dropped += bytes;
    const text = markerText(marker.marker!.dropped);
    this.budget.total += text.length - marker.bytes;
    marker.bytes = text.length;
    (marker.update as acp.ContentChunk).content = { type: "text", text };
    marker.done.push(resolve);
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#queue.length > 0) {
        // Out of the queue before it is written: nothing merges into a frame the SDK is serializing.
        const next = this.#queue.shift()!;
        this.#writing = next;
        try {
          await this.write(next.update);
        } finally {
          this.#writing = undefined;
          this.budget.total -= next.bytes;
          for (const done of next.done) done();
        }
        // Under the limit again: a later overflow is told again.
        if (!this.budget.over) this.#told = false;
      }
    } finally {
      this.#pumping = false;
    }
  }
}
