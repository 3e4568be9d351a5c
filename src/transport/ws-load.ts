/**
 * Loads ws once, when something first needs it: ws loads node:https, tls
 * and zlib with it (~5 ms of a start on these hosts), which a client
 * command's own server, spoken to over the in-memory link, may never need.
 *
 * ws's optional native addon (bufferutil) is left out, as src/cli.ts leaves
 * it out of the code a command loads at start: ws would load it as it loads
 * (node-gyp-build looking for a prebuilt binary, then a dlopen: ~3–7 ms and
 * ~1 MiB) to mask frames of 32 bytes and more in C, frames agentwire's
 * messages are too small to gain from. An operator's own WS_NO_BUFFER_UTIL
 * is left as it is.
 */
export type WsLibrary = typeof import("./ws-library.js");

let loading: Promise<WsLibrary> | undefined;
let loaded: WsLibrary | undefined;

export function loadWs(): Promise<WsLibrary> {
  return (loading ??= importWithoutNatives());
}

/** ws if it has been loaded, else undefined (then loadWs()). */
export function wsIfLoaded(): WsLibrary | undefined {
  return loaded;
}

async function importWithoutNatives(): Promise<WsLibrary> {
  const own = process.env.WS_NO_BUFFER_UTIL === undefined;
  if (own) process.env.WS_NO_BUFFER_UTIL = "1";
  try {
    return (loaded = await import("./ws-library.js"));
  } finally {
    // Not passed on to what the server starts (tools, MCP servers, runtimes).
    if (own) delete process.env.WS_NO_BUFFER_UTIL;
  }
}
