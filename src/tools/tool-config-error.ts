/**
 * A tool configuration the server cannot start with (a custom tool whose
 * schema cannot be used, two tools with one name, web_search without its
 * key). The message names the tool or the config field and says what to
 * change; the start-up path reports it like any other configuration error.
 */
export class ToolConfigError extends Error {
  override name = "ToolConfigError";
}
