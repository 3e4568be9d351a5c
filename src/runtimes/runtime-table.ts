/**
 * The configured runtimes (config `runtimes`), each made on first use and
 * kept: one process per runtime, shared by the conversations on it. A new
 * runtime kind is one line in `make` (and its name in
 * protocol/config-runtimes.ts's RuntimeKind).
 */
import { RuntimeDefinition, type RuntimesConfig } from "../../protocol/config-runtimes.js";
import { ClaudeRuntime } from "./claude-runtime.js";
import { CodexRuntime } from "./codex-runtime.js";
import type { AgentRuntime } from "./runtime.js";

export class RuntimeTable {
  private readonly definitions: Map<string, ReturnType<typeof RuntimeDefinition.parse>>;
  private readonly instances = new Map<string, AgentRuntime>();

  constructor(
    config: RuntimesConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.definitions = new Map(Object.entries(config).map(([name, written]) => [name, RuntimeDefinition.parse(written)]));
  }

  names(): string[] {
    return [...this.definitions.keys()];
  }

  has(name: string): boolean {
    return this.definitions.has(name);
  }

  /** Each runtime, its kind and whether its package is installed here (models.list); no process is started. */
  statuses(): { name: string; runtime: string; status: "ok" | "missing"; error?: string }[] {
    return this.names().map((name) => {
      const runtime = this.definitions.get(name)!.runtime;
      try {
        this.get(name).checkAvailable();
        return { name, runtime, status: "ok" as const };
      } catch (error) {
        return { name, runtime, status: "missing" as const, error: error instanceof Error ? error.message : String(error) };
      }
    });
  }

  /** The runtime of that name (its process starts with its first session, not here). */
  get(name: string): AgentRuntime {
    let runtime = this.instances.get(name);
    if (!runtime) {
      const definition = this.definitions.get(name);
      if (!definition) throw new Error(`no runtime named "${name}"`);
      runtime = this.make(name, definition);
      this.instances.set(name, runtime);
    }
    return runtime;
  }

  private make(name: string, definition: ReturnType<typeof RuntimeDefinition.parse>): AgentRuntime {
    switch (definition.runtime) {
      case "codex":
        return new CodexRuntime(name, definition, this.env);
      case "claude":
        return new ClaudeRuntime(name, definition, this.env);
    }
  }

  /** Stop every runtime's process (server shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.instances.values()].map((runtime) => runtime.close().catch(() => undefined)));
  }
}
