/**
 * The official MCP SDK, loaded on first use: a server with no MCP servers
 * never pays for it at start-up (the client pulls in ajv and the SDK's zod
 * schemas), and the bundle keeps it in a chunk of its own.
 */
export type McpSdk = Awaited<ReturnType<typeof importSdk>>;

async function importSdk() {
  const [client, stdio, http, types, inputs] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    // The form an elicitation may ask for (a zod schema): only a connected server elicits, so it comes with the SDK.
    import("../../protocol/input-request.js"),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    ElicitRequestSchema: types.ElicitRequestSchema,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    InputForm: inputs.InputForm,
  };
}

let loading: Promise<McpSdk> | undefined;

export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= importSdk().catch((error: unknown) => {
    loading = undefined; // let a later attempt try again
    throw error;
  });
  return loading;
}

export type McpClient = InstanceType<McpSdk["Client"]>;
export type McpListedTool = Awaited<ReturnType<McpClient["listTools"]>>["tools"][number];
export type McpCallResult = Awaited<ReturnType<McpClient["callTool"]>>;
