import type { NotificationMethod, NotificationParams } from "../../protocol/index.js";
import type { GenerationSummary } from "../store/conversation-store.js";

/**
 * What watches every conversation's runtime from outside (the server's
 * metrics): each event as it is published, and each generation's end.
 * `event` runs on the token path (once per generation_progress frame), so an
 * observer keeps it to a few comparisons and counter increments.
 */
export interface RuntimeObserver {
  event<N extends NotificationMethod>(method: N, payload: Omit<NotificationParams<N>, "conversationId" | "seq" | "timestamp">): void;
  generationEnded(summary: GenerationSummary): void;
}
