import type { z } from "zod";

export interface ToolRunContext {
  /** Working directory (the conversation's workspace). */
  cwd: string;
  /** Aborted by interrupt: the tool must stop at once (kill its process group). */
  signal: AbortSignal;
  /** Time limit; on expiry the tool stops and fails. */
  timeoutMs: number;
  /** Streamed output, in order. */
  onOutput(stream: "stdout" | "stderr", chunk: string): void;
}

export interface ToolResult {
  success: boolean;
  /** Text for the model (capped by the tool, with a marker saying how much was cut). */
  output: string;
  exitCode?: number | null;
}

/**
 * A tool the model may call. Arguments are validated with `parameters`
 * (zod) before `run`; the JSON Schema offered to the model is derived from it.
 * Make `parameters` a `z.strictObject`: an unknown key is then an
 * `unrecognized_keys` issue, and the schema says `additionalProperties: false`.
 */
export interface Tool<A extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: z.ZodType<A>;
  run(args: A, context: ToolRunContext): Promise<ToolResult>;
}

export interface ToolRegistry {
  list(): Tool[];
  get(name: string): Tool | undefined;
}
