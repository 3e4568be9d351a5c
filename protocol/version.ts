/**
 * The protocol version spoken by this server. A client sends the version it
 * speaks in `initialize`; the server refuses a different major version with
 * UNSUPPORTED_PROTOCOL_VERSION so that a stale client fails loudly, not subtly.
 */
export const PROTOCOL_VERSION = "1.0";

/** The major part of PROTOCOL_VERSION: clients of the same major are accepted. */
export const PROTOCOL_MAJOR = 1;
