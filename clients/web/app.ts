/**
 * The agentwire web client: conversation list, new conversation, streaming
 * answers, tool approval, interrupt, and reconnection that resumes where it
 * left off (conversation.subscribe with afterSeq; a full reload when the
 * server says resync). Built only on the generated TypeScript client.
 */
import "./style.css";
import type { AgentwireClient, Conversation } from "../typescript/index.js";
import { Connection, type ConnectionState } from "./connection.js";
import { ConversationView } from "./conversation-view.js";
import { button, el } from "./dom.js";
import type { ToolDecision } from "./tool-card.js";

const TOKEN_KEY = "agentwire.token";
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const statusNode = $("status");
const tokenForm = $<HTMLFormElement>("token-form");
const tokenInput = $<HTMLInputElement>("token");
const listNode = $("conversations");
const titleNode = $("title");
const mainNode = $("conversation");
const composer = $<HTMLFormElement>("composer");
const input = $<HTMLTextAreaElement>("input");
const sendButton = $<HTMLButtonElement>("send");
const interruptButton = $<HTMLButtonElement>("interrupt");

// A token in the page URL (?token=) is kept for this tab and removed from the address bar.
const pageParams = new URLSearchParams(location.search);
if (pageParams.has("token")) {
  sessionStorage.setItem(TOKEN_KEY, pageParams.get("token")!);
  pageParams.delete("token");
  history.replaceState(null, "", location.pathname + (pageParams.size ? `?${pageParams}` : ""));
}

let client: AgentwireClient | undefined;
let view: ConversationView | undefined;
let everConnected = false;
const conversations = new Map<string, Conversation>();

const connection = new Connection({
  url: `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/`,
  token: () => sessionStorage.getItem(TOKEN_KEY) ?? undefined,
  onState: (state) => void onConnectionState(state),
});

async function onConnectionState(state: ConnectionState): Promise<void> {
  document.body.dataset.connection = state.kind;
  if (state.kind === "connecting") {
    statusNode.textContent = "connecting…";
    return;
  }
  if (state.kind === "reconnecting") {
    client = undefined;
    statusNode.textContent = everConnected ? "reconnecting…" : "cannot connect, retrying…";
    // The browser cannot tell a refused token from a server that is down: offer the field either way.
    tokenForm.hidden = !state.refused;
    updateControls();
    return;
  }
  client = state.client;
  everConnected = true;
  tokenForm.hidden = true;
  statusNode.textContent = "resuming…";
  client.onAny((method, params) => {
    if (method === "conversation_updated") {
      if (params.deleted) conversations.delete(params.conversationId);
      else conversations.set(params.conversationId, params.conversation);
      renderList();
    }
    if (view && "conversationId" in params && params.conversationId === view.conversationId) view.apply(method, params);
  });
  try {
    await refreshList();
    if (view) await resume(view);
    else if (location.hash.length > 1) await open(decodeURIComponent(location.hash.slice(1)));
  } catch (error) {
    // A socket that drops while resuming is retried by the connection; anything else
    // (the open conversation was deleted meanwhile, say) closes the view and says why.
    if (client !== state.client || state.client.closed) return;
    view = undefined;
    titleNode.textContent = "No conversation open";
    mainNode.replaceChildren(el("p", { class: "hint", text: error instanceof Error ? error.message : String(error) }));
    history.replaceState(null, "", location.pathname + location.search);
    renderList();
  }
  // "connected" only once the open conversation is caught up.
  if (client === state.client) statusNode.textContent = "connected";
  updateControls();
}

/** After a reconnect: replay what was missed, or reload when the server no longer holds it. */
async function resume(current: ConversationView): Promise<void> {
  const c = client!;
  const result = await c.conversation.subscribe({ conversationId: current.conversationId, afterSeq: current.lastSeq });
  if (result.resync) current.load(await c.conversation.get({ conversationId: current.conversationId, includeRecords: true }));
  current.generating = result.state.generating;
}

async function refreshList(): Promise<void> {
  const page = await client!.conversation.list({ limit: 100 });
  conversations.clear();
  for (const c of page.data) conversations.set(c.id, c);
  renderList();
}

function renderList(): void {
  const items = [...conversations.values()].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  listNode.replaceChildren(
    ...items.map((c) => {
      const item = el("li", { attrs: { "data-conversation-id": c.id } }, button(c.title || "untitled", () => void open(c.id)));
      if (view?.conversationId === c.id) item.classList.add("active");
      return item;
    }),
  );
}

async function open(conversationId: string): Promise<void> {
  const c = client;
  if (!c) return;
  if (view && view.conversationId !== conversationId) {
    await c.conversation.unsubscribe({ conversationId: view.conversationId }).catch(() => {});
  }
  const next = new ConversationView(conversationId, (toolCallId, decision) => decide(conversationId, toolCallId, decision), updateControls);
  view = next;
  // Subscribe first, then read: an event between the two is applied after the load
  // (its seq is above the loaded one), and nothing can fall in between.
  await c.conversation.subscribe({ conversationId });
  const got = await c.conversation.get({ conversationId, includeRecords: true });
  if (view !== next) return;
  next.load(got);
  conversations.set(conversationId, got.conversation);
  titleNode.textContent = got.conversation.title || "untitled";
  mainNode.replaceChildren(next.node);
  history.replaceState(null, "", `#${encodeURIComponent(conversationId)}`);
  renderList();
  updateControls();
}

async function decide(conversationId: string, toolCallId: string, decision: ToolDecision): Promise<void> {
  if (!client) throw new Error("not connected; waiting to reconnect");
  await client.tool.confirm({ conversationId, toolCallId, ...decision });
}

function updateControls(): void {
  const ready = client !== undefined && view !== undefined;
  const generating = view?.generating ?? false;
  sendButton.disabled = !ready || generating;
  interruptButton.hidden = !generating;
  interruptButton.disabled = !ready;
  document.body.dataset.generating = String(generating);
  const current = view && conversations.get(view.conversationId);
  if (current) titleNode.textContent = current.title || "untitled";
}

$("new").addEventListener("click", async () => {
  if (!client) return;
  const created = await client.conversation.create({ title: "New conversation" });
  conversations.set(created.id, created);
  await open(created.id);
  input.focus();
});

composer.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!client || !view || !text || view.generating) return;
  const conversationId = view.conversationId;
  sendButton.disabled = true;
  try {
    await client.message.append({ conversationId, role: "user", content: text });
    input.value = "";
    // A conversation still called "New conversation" takes its first message as its title.
    if (conversations.get(conversationId)?.title === "New conversation") {
      void client.conversation.update({ conversationId, title: text.slice(0, 60) }).catch(() => {});
    }
    view.generating = true;
    await client.step({ conversationId });
  } catch (error) {
    view.generating = false;
    statusNode.textContent = error instanceof Error ? error.message : String(error);
  } finally {
    updateControls();
  }
});

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    composer.requestSubmit();
  }
});

interruptButton.addEventListener("click", () => {
  if (client && view) void client.interrupt({ conversationId: view.conversationId });
});

tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, tokenInput.value.trim());
  tokenInput.value = "";
  statusNode.textContent = "connecting…";
  connection.retryNow();
});

connection.start();
