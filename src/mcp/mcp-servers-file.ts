/**
 * The MCP servers added with mcp.add, kept in `<dataDir>/mcp-servers.json`
 * as `{ "mcpServers": { name: definition } }` (the shape MCP hosts use, so
 * the file can be copied into agentwire.json as is). Written atomically: a
 * temporary file, flushed, then renamed over the old one — a crash leaves
 * the old file or the new one, never half of one.
 */
import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { McpServersConfig } from "../../protocol/config-mcp.js";
import { makeDirectory } from "../store/make-directory.js";

export const MCP_SERVERS_FILE = "mcp-servers.json";

export type LoadedServers = { servers: McpServersConfig; problem?: undefined } | { servers: McpServersConfig; problem: string };

export class McpServersFile {
  readonly path: string;
  /** Writes run one after another, each with the state as it was when it was asked for. */
  private queue: Promise<void> = Promise.resolve();
  /** The file on disk could not be understood: set it aside before the first write. */
  private damaged = false;

  constructor(private readonly dataDir: string) {
    this.path = join(dataDir, MCP_SERVERS_FILE);
  }

  /** The saved servers; a missing file is none. A damaged file is reported and set aside at the next write, never silently overwritten. */
  async load(): Promise<LoadedServers> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { servers: {} };
      return { servers: {}, problem: `cannot be read (${(error as Error).message})` };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      this.damaged = true;
      return { servers: {}, problem: `is not valid JSON (${(error as Error).message})` };
    }
    // The file's schema is built when a data dir first has the file.
    const { McpServersFileShape, fileShapeProblem } = await import("./mcp-servers-file-schema.js");
    const parsed = McpServersFileShape.safeParse(json);
    if (!parsed.success) {
      this.damaged = true;
      return { servers: {}, problem: `does not hold valid server definitions (${fileShapeProblem(parsed.error)})` };
    }
    return { servers: parsed.data.mcpServers };
  }

  save(servers: McpServersConfig): Promise<void> {
    const snapshot = JSON.stringify({ mcpServers: servers }, null, 2) + "\n";
    const write = this.queue.then(() => this.write(snapshot));
    this.queue = write.catch(() => {});
    return write;
  }

  private async write(text: string): Promise<void> {
    await makeDirectory(this.dataDir);
    if (this.damaged) {
      // Keep what the operator may want to repair by hand.
      await rename(this.path, `${this.path}.damaged-${Date.now()}`).catch(() => {});
      this.damaged = false;
    }
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      const file = await open(temp, "w", 0o600);
      try {
        await file.writeFile(text, "utf8");
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, this.path);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => {});
      throw error;
    }
  }
}
