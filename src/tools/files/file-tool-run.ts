/**
 * The frame every file tool runs in: one signal that fires on interrupt or
 * on the time limit, and one place that turns refusals, file system errors
 * and aborts into a failed result for the model instead of a thrown error.
 */
import { describeFsError, FileToolError } from "./file-tool-error.js";
import type { ToolResult, ToolRunContext } from "../tool.js";

/** setTimeout fires at once for delays above this. */
const MAX_TIMER_MS = 2_147_483_647;

export interface FileToolRunOptions {
  /**
   * The tool changes nothing, so on abort its result can be given at once
   * while a file system call still finishes in the background. A writing
   * tool is awaited instead (it checks the signal before it commits), so
   * that what it reports is what happened.
   */
  readOnly: boolean;
}

/** Why the run's signal fired. */
class Ending extends Error {
  constructor(readonly kind: "interrupted" | "timeout") {
    super(kind);
  }
}

export async function runFileTool(
  context: ToolRunContext,
  options: FileToolRunOptions,
  body: (signal: AbortSignal) => Promise<ToolResult>,
): Promise<ToolResult> {
  if (context.signal.aborted) return { success: false, output: "[interrupted before the tool started]" };
  const controller = new AbortController();
  const onInterrupt = () => controller.abort(new Ending("interrupted"));
  context.signal.addEventListener("abort", onInterrupt, { once: true });
  const limit = context.timeoutMs;
  const timer =
    Number.isFinite(limit) && limit > 0
      ? setTimeout(() => controller.abort(new Ending("timeout")), Math.min(limit, MAX_TIMER_MS))
      : undefined;
  try {
    const work = body(controller.signal);
    if (!options.readOnly) return await work;
    let stop: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      stop = () => reject(controller.signal.reason);
      controller.signal.addEventListener("abort", stop, { once: true });
    });
    work.catch(() => {}); // Its failure after an abort is of no interest.
    try {
      return await Promise.race([work, stopped]);
    } finally {
      controller.signal.removeEventListener("abort", stop!);
    }
  } catch (error) {
    return { success: false, output: failureText(error, controller.signal, limit) };
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener("abort", onInterrupt);
  }
}

/** Throws the run's abort reason when its signal has fired: call between steps of long work. */
export function throwIfStopped(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason;
}

function failureText(error: unknown, signal: AbortSignal, limit: number): string {
  const ending = signal.aborted && signal.reason instanceof Ending ? signal.reason.kind : null;
  if (ending === "timeout") return `[timed out after ${limit} ms]`;
  if (ending === "interrupted") return "[interrupted]";
  if (error instanceof FileToolError) return `Error: ${error.message}`;
  // Node's own messages carry server paths: say the code only.
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code === "string") return `Error: ${describeFsError(error, "the path") ?? `file system error ${code}`}`;
  return `Error: ${error instanceof Error ? error.message : String(error)}`;
}
