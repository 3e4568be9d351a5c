/**
 * A child process that speaks JSON lines on stdio: each stdout line one JSON
 * value, each value written to stdin one line. The shared part of every
 * process runtime — Codex's app-server (JSON-RPC over those lines) as well as
 * a CLI agent that only prints events (Gemini CLI's or cursor-agent's
 * stream-json output). A line that is not JSON is reported, never fatal.
 *
 * On top, JsonRpcLines: requests with ids and their answers, notifications,
 * and requests the process sends us (answered with `respond`), as Codex's
 * app-server uses them (JSON-RPC 2.0 without the "jsonrpc" member).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { RuntimeError } from "./runtime.js";

/** stderr kept for the error a dying process is reported with. */
const STDERR_TAIL_BYTES = 4096;
/** A line longer than this is dropped (reported): a process cannot make the server hold unbounded text. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export interface JsonLinesOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Every parsed line. */
  onValue(value: unknown): void;
  /** A line that is not JSON (or too long); the process goes on. */
  onBadLine?(line: string): void;
  /** The process ended (or could not start); `tail` is the end of its stderr. */
  onExit(error: RuntimeError): void;
}

export class JsonLinesProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private stderr = "";
  private exited = false;
  readonly ended: Promise<void>;

  constructor(options: JsonLinesOptions) {
    this.child = spawn(options.command, options.args, { env: options.env, cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdin.on("error", () => undefined); // a closed pipe shows as the exit below
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    const lines = createInterface({ input: this.child.stdout, crlfDelay: Infinity });
    lines.on("line", (line) => {
      if (line.trim() === "") return;
      if (line.length > MAX_LINE_BYTES) return options.onBadLine?.(line.slice(0, 200));
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return options.onBadLine?.(line.slice(0, 200));
      }
      options.onValue(value);
    });
    this.ended = new Promise((resolve) => {
      const end = (why: string) => {
        if (this.exited) return;
        this.exited = true;
        const tail = this.stderr.trim().split("\n").slice(-5).join("\n");
        options.onExit(new RuntimeError(`${why}${tail ? `: ${tail}` : ""}`));
        resolve();
      };
      this.child.on("error", (error) => end(`${options.command} could not start (${error.message})`));
      this.child.on("exit", (code, signal) => end(`the runtime's process ended (${signal ?? `exit code ${code}`})`));
    });
  }

  get alive(): boolean {
    return !this.exited;
  }

  write(value: unknown): void {
    if (!this.exited) this.child.stdin.write(`${JSON.stringify(value)}\n`);
  }

  /** SIGTERM, then SIGKILL if it has not gone within `graceMs`. */
  async stop(graceMs = 2000): Promise<void> {
    if (this.exited) return;
    this.child.stdin.end();
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await this.ended;
    clearTimeout(timer);
  }
}

type Json = Record<string, unknown>;

/** A request the process sent us; answer it once with respond(). */
export interface IncomingRequest {
  method: string;
  params: Json;
  respond(result: unknown): void;
  /** Answer with a JSON-RPC error (a request this client does not serve). */
  fail(code: number, message: string): void;
}

export interface JsonRpcLinesOptions extends Omit<JsonLinesOptions, "onValue"> {
  onNotification(method: string, params: Json): void;
  onRequest(request: IncomingRequest): void;
}

/** JSON-RPC over a JsonLinesProcess (ids, answers, errors). */
export class JsonRpcLines {
  private readonly process: JsonLinesProcess;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; method: string }>();
  private failure: RuntimeError | undefined;

  constructor(options: JsonRpcLinesOptions) {
    this.process = new JsonLinesProcess({
      ...options,
      onValue: (value) => this.receive(value, options),
      onExit: (error) => {
        this.failure = error;
        for (const waiting of this.pending.values()) waiting.reject(error);
        this.pending.clear();
        options.onExit(error);
      },
    });
  }

  get alive(): boolean {
    return this.process.alive;
  }

  request<T = Json>(method: string, params: unknown): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, method });
      this.process.write({ id, method, params });
    });
  }

  notify(method: string, params?: unknown): void {
    this.process.write(params === undefined ? { method } : { method, params });
  }

  stop(): Promise<void> {
    return this.process.stop();
  }

  private receive(value: unknown, options: JsonRpcLinesOptions): void {
    if (typeof value !== "object" || value === null) return options.onBadLine?.(JSON.stringify(value).slice(0, 200));
    const message = value as { id?: number | string; method?: string; params?: Json; result?: unknown; error?: { message?: string } };
    if (typeof message.method === "string") {
      const params = message.params ?? {};
      if (message.id === undefined) return options.onNotification(message.method, params);
      const id = message.id;
      let answered = false;
      return options.onRequest({
        method: message.method,
        params,
        respond: (result) => {
          if (answered) return;
          answered = true;
          this.process.write({ id, result });
        },
        fail: (code, text) => {
          if (answered) return;
          answered = true;
          this.process.write({ id, error: { code, message: text } });
        },
      });
    }
    const waiting = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
    if (!waiting) return;
    this.pending.delete(message.id as number);
    if (message.error) waiting.reject(new RuntimeError(`${waiting.method}: ${message.error.message ?? JSON.stringify(message.error)}`));
    else waiting.resolve(message.result);
  }
}
