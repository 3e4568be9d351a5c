/**
 * The fixed parts of compaction: the prompt the model is given to summarize
 * a conversation (quoted in docs/clients.md — keep the two the same), and
 * the arithmetic that decides when compaction runs by itself.
 */
import type { ConversationSettings } from "../../protocol/index.js";
import { DEFAULT_CONVERSATION_SETTINGS } from "../../protocol/settings-defaults.js";
import type { ChatMessage } from "../llm/chat-message.js";

export const COMPACTION_PROMPT = `Stop here and write a summary of this conversation so far, for yourself: the messages before this one will be replaced by your summary, and the work goes on from it alone. Do not call any tools. Include:
- the user's goal, and every requirement, preference or constraint they stated;
- what has been done: decisions taken, files read, created or changed (with their paths), commands run and what they showed;
- what is still open: the next steps, errors not yet resolved, questions waiting for an answer;
- every detail needed to continue (names, paths, values, identifiers, exact error messages).
Be concise, but leave out nothing needed to continue. Answer with the summary only.`;

/** The last user message of a summary request: the fixed prompt, then the user's own instructions, if any. */
export function compactionRequestText(instructions: string | undefined): string {
  const extra = instructions?.trim();
  return extra ? `${COMPACTION_PROMPT}\n\nThe user's instructions for this summary:\n${extra}` : COMPACTION_PROMPT;
}

/** A rough token count for text the endpoint has not counted: 4 characters a token (English prose and code average about that). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/**
 * The context size past which a request is compacted first, in tokens, or
 * null when automatic compaction is off: settings.autoCompact null or 0, or
 * the model declares no context window.
 */
export function autoCompactLimit(settings: ConversationSettings, contextWindow: number | undefined): number | null {
  const fraction = settings.autoCompact === undefined ? DEFAULT_CONVERSATION_SETTINGS.autoCompact : settings.autoCompact;
  if (!fraction || !contextWindow) return null;
  return Math.floor(contextWindow * fraction);
}

/**
 * How many tokens the request built from `messages` will take: the context
 * the last model call left (its prompt and its answer, as the endpoint
 * counted them), plus an estimate of what came after that answer (tool
 * results, the user's new message). Without a last call in these messages
 * to go by (none yet, or none since the last compaction) all of it is
 * estimated.
 */
export function estimateRequestTokens(messages: readonly ChatMessage[], lastContextTokens: number | null): number {
  const lastAnswer = messages.findLastIndex((message) => message.role === "assistant");
  if (lastContextTokens === null || lastContextTokens === 0 || lastAnswer < 0) return estimateTokens(charsOf(messages));
  return lastContextTokens + estimateTokens(charsOf(messages.slice(lastAnswer + 1)));
}

/** What an image counts for in an estimate, in characters: about the tokens a detailed image costs, not its base64 size. */
const IMAGE_CHARS = 4_000;

function charsOf(messages: readonly ChatMessage[]): number {
  let images = 0;
  const text = JSON.stringify(messages, (key, value: unknown) => {
    if (key !== "image_url") return value;
    images++;
    return "";
  });
  return text.length + images * IMAGE_CHARS;
}
