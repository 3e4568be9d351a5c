/**
 * ws, as one module the server and the client commands load lazily
 * (ws-load.ts): a chunk of its own in the bundle, named for what it holds.
 */
export { WebSocket, WebSocketServer } from "ws";
