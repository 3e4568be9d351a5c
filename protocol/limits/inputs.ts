/**
 * Bounds of questions to the user (input-request.ts, which re-exports them),
 * kept apart from its zod schemas: the server's start path and the agent
 * runtimes' turns read them, and the schemas are built when a request, a
 * stored question or an MCP elicitation first needs them.
 */
/** Longest question, in characters. */
export const MAX_QUESTION_CHARS = 2000;
/** Most choices one question offers. */
export const MAX_CHOICES = 20;
/** Longest choice, in characters. */
export const MAX_CHOICE_CHARS = 200;
/** Most fields one form has. */
export const MAX_FORM_FIELDS = 20;
/** Longest text answer (and longest text field of a form answer), in characters. */
export const MAX_ANSWER_CHARS = 10_000;
/** Most questions open at once in one conversation; a further ask_user fails, a further MCP elicitation is declined. */
export const MAX_PENDING_INPUTS = 8;
