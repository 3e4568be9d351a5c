/**
 * The start-up failures a user can act on are listed once
 * (src/start-failure.ts) for `serve` and for the commands that embed a
 * server (chat, conversations): each is one line; anything else is a fault.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/server.js";
import { knownStartFailure } from "../../src/start-failure.js";
import { DataDirLockedError } from "../../src/store/conversation-store.js";
import { StoreUnavailableError } from "../../src/store/store-unavailable-error.js";
import { ToolConfigError } from "../../src/tools/tool-config-error.js";

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}: 127.0.0.1:4000`), { code });
}

describe("known start-up failures", () => {
  it("are told by kind, with their own one-line message", () => {
    expect(knownStartFailure(new ConfigError("model: no provider"))).toEqual({ kind: "config", message: "model: no provider" });
    expect(knownStartFailure(new DataDirLockedError("the data dir is locked"))).toEqual({ kind: "data-dir-locked", message: "the data dir is locked" });
    expect(knownStartFailure(new StoreUnavailableError("could not open the store"))).toEqual({ kind: "store", message: "could not open the store" });
    expect(knownStartFailure(new ToolConfigError("two tools named shell"))).toEqual({ kind: "tools", message: "two tools named shell" });
    for (const code of ["EADDRINUSE", "EACCES", "EADDRNOTAVAIL"]) {
      expect(knownStartFailure(errno(code))).toEqual({ kind: "address", message: `listen ${code}: 127.0.0.1:4000`, code });
    }
  });

  it("anything else is a fault, left to its stack trace", () => {
    expect(knownStartFailure(new TypeError("x is undefined"))).toBeUndefined();
    expect(knownStartFailure(errno("ENOENT"))).toBeUndefined();
    expect(knownStartFailure("not an error")).toBeUndefined();
  });
});
