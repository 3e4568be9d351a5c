/**
 * The agentwire web client: conversation list (search, rename, delete), new
 * conversation, model and approval pickers, streaming answers, tool approval,
 * interrupt, keyboard shortcuts, and reconnection that resumes where it left
 * off (conversation.subscribe with afterSeq; a full reload when the server
 * says resync); the context meter and cost of the open conversation, and
 * notices as transient messages; a message typed while the agent works is
 * steered into its turn or queued after it, rewind (with the files) and its
 * undo, compaction; a `/` command menu (prompt templates, sent as
 * message.append { command, arguments }); question cards for input_requested
 * (input.respond), a mode picker (modes.list, conversation.update { mode }),
 * and sub-agents: a link from the spawn_agent card to the child conversation,
 * children nested under their parent in the list. Built only on the generated TypeScript client.
 */
import "./style.css";
import type {
  AgentwireClient,
  Conversation,
  ConversationRewindResult,
  ConversationUpdateParams,
  MessageAppendParams,
  MessageAppendResult,
  ModelsListResult,
  ModesListResult,
  NotificationParams,
  ToolsListResult,
} from "../typescript/index.js";
import { CommandMenu } from "./command-menu.js";
import { Connection, type ConnectionState } from "./connection.js";
import { ConversationView } from "./conversation-view.js";
import { button, el, icon, iconButton, type IconName } from "./dom.js";
import { NoticeArea } from "./notice-area.js";
import type { ToolDecision } from "./tool-card.js";
import { UsageMeter, type UsageState } from "./usage-meter.js";

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
const queueButton = $<HTMLButtonElement>("queue");
const compactButton = $<HTMLButtonElement>("compact");
const shortcutsNode = $("shortcuts");
const searchInput = $<HTMLInputElement>("search");
const noMatch = $("no-match");
const modelSelect = $<HTMLSelectElement>("model");
const approvalSelect = $<HTMLSelectElement>("approval");
const modeSelect = $<HTMLSelectElement>("mode");
const sidebarToggle = $<HTMLButtonElement>("toggle-sidebar");
const usageMeter = new UsageMeter($("usage"));
const notices = new NoticeArea($("notices"));
const commandMenu = new CommandMenu(input, async () => {
  if (!client || !view) return [];
  return (await client.commands.list({ conversationId: view.conversationId })).commands;
});
composer.prepend(commandMenu.node);

for (const node of document.querySelectorAll<HTMLElement>("[data-icon]")) node.append(icon(node.dataset.icon as IconName));

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
let models: ModelsListResult | undefined;
let tools: ToolsListResult | undefined;
let modes: ModesListResult | undefined;
/** The open conversation's usage as last shown (the meter is redrawn from it). */
let usage: UsageState | undefined;

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
  // The server's start-up notices (configuration it left out), once per page.
  if (!everConnected) {
    for (const notice of state.client.initializeResult.notices ?? []) {
      notices.show({ level: notice.code === "config_fallback" ? "info" : "warning", code: notice.code, message: notice.message }, { sticky: true });
    }
  }
  everConnected = true;
  tokenForm.hidden = true;
  statusNode.textContent = "resuming…";
  client.onAny((method, params) => {
    if (method === "conversation_updated") {
      if (params.deleted) conversations.delete(params.conversationId);
      else conversations.set(params.conversationId, params.conversation);
      renderList();
      // Another client's change (mode, model, approval) shows in the pickers.
      if (view?.conversationId === params.conversationId) updateControls();
    }
    // A sub-agent's conversation was created: listed (under its parent) without waiting for a reload.
    if (method === "subagent_started") void addToList(params.childConversationId);
    // A server-wide notice (an MCP server down or back) has no conversation: shown whatever is open.
    if (method === "notice" && !params.conversationId) showNotice(params);
    if (view && "conversationId" in params && params.conversationId === view.conversationId) view.apply(method, params);
  });
  void loadModels(state.client);
  void loadTools(state.client);
  void loadModes(state.client);
  try {
    await refreshList();
    if (view) await resume(view);
    else if (location.hash.length > 1) await open(decodeURIComponent(location.hash.slice(1)));
  } catch (error) {
    // A socket that drops while resuming is retried by the connection; anything else
    // (the open conversation was deleted meanwhile, say) closes the view and says why.
    if (client !== state.client || state.client.closed) return;
    closeView(error instanceof Error ? error.message : String(error));
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
  if (result.resync) {
    const got = await c.conversation.get({ conversationId: current.conversationId, includeRecords: true });
    current.load(got);
    initialUsage(got.conversation);
  }
  current.generating = result.state.generating;
}

async function refreshList(): Promise<void> {
  const page = await client!.conversation.list({ limit: 100 });
  conversations.clear();
  for (const c of page.data) conversations.set(c.id, c);
  renderList();
}

async function addToList(conversationId: string): Promise<void> {
  if (conversations.has(conversationId) || !client) return;
  try {
    conversations.set(conversationId, (await client.conversation.get({ conversationId })).conversation);
    renderList();
  } catch {
    // Deleted meanwhile: nothing to list.
  }
}

function renderList(): void {
  // While an entry is being renamed the list waits (the rename redraws it when done): redrawing
  // would move its text field, and a moved field loses focus, which cancels the edit.
  if (listNode.querySelector("input.rename")) return;
  const query = searchInput.value.trim().toLowerCase();
  const items = [...conversations.values()]
    .filter((c) => !query || (c.title || "untitled").toLowerCase().includes(query))
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  // A sub-agent's conversation goes right under its parent (when the parent is listed), indented.
  const shown = new Set(items.map((c) => c.id));
  const children = new Map<string, Conversation[]>();
  for (const c of items) {
    if (c.parentConversationId && shown.has(c.parentConversationId)) children.set(c.parentConversationId, [...(children.get(c.parentConversationId) ?? []), c]);
  }
  const nodes: HTMLLIElement[] = [];
  const add = (c: Conversation, depth: number) => {
    nodes.push(listItem(c, depth));
    for (const child of children.get(c.id) ?? []) add(child, depth + 1);
  };
  for (const c of items) if (!c.parentConversationId || !shown.has(c.parentConversationId)) add(c, 0);
  listNode.replaceChildren(...nodes);
  noMatch.hidden = items.length > 0 || conversations.size === 0;
}

function listItem(c: Conversation, depth = 0): HTMLLIElement {
  const title = c.title || "untitled";
  const parent = c.parentConversationId ? conversations.get(c.parentConversationId) : undefined;
  const subagent = c.parentConversationId ? `sub-agent of “${parent?.title || "another conversation"}”` : "";
  const openButton = button(title, () => void open(c.id), { class: "open", title: subagent ? `${title} (${subagent})` : title });
  if (subagent) {
    openButton.prepend(el("span", { class: "subagent-mark", text: "↳ ", attrs: { "aria-hidden": "true" } }));
    openButton.append(el("span", { class: "sr-only", text: ` (${subagent})` }));
  }
  if (view?.conversationId === c.id) openButton.setAttribute("aria-current", "true");
  const item = el(
    "li",
    { attrs: { "data-conversation-id": c.id, ...(c.parentConversationId ? { "data-parent-id": c.parentConversationId } : {}) } },
    openButton,
    iconButton("rename", `Rename “${title}”`, () => startRename(item, c)),
    iconButton("delete", `Delete “${title}”`, () => void remove(c)),
  );
  if (view?.conversationId === c.id) item.classList.add("active");
  if (c.parentConversationId) item.classList.add("subagent");
  if (depth > 0) item.style.setProperty("--depth", String(Math.min(depth, 4)));
  return item;
}

/** The title becomes a text field: Enter saves (conversation.update), Escape or leaving it cancels. */
function startRename(item: HTMLLIElement, c: Conversation): void {
  const field = el("input", { class: "rename", attrs: { type: "text", value: c.title, "aria-label": "New title", maxlength: "200" } });
  let done = false;
  const finish = async (save: boolean) => {
    if (done) return;
    done = true;
    const title = field.value.trim();
    if (save && client && title && title !== c.title) {
      try {
        conversations.set(c.id, await client.conversation.update({ conversationId: c.id, title }));
      } catch (error) {
        statusNode.textContent = `rename failed: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    field.remove(); // ends the rename: renderList draws the entry again
    renderList();
    updateControls();
    listNode.querySelector<HTMLButtonElement>(`li[data-conversation-id="${CSS.escape(c.id)}"] button.open`)?.focus();
  };
  field.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      void finish(true);
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      void finish(false);
    }
  });
  field.addEventListener("blur", () => void finish(false));
  item.replaceChildren(field);
  field.focus();
  field.select();
}

async function remove(c: Conversation): Promise<void> {
  if (!client || !confirm(`Delete the conversation “${c.title || "untitled"}”? This cannot be undone.`)) return;
  try {
    await client.conversation.delete({ conversationId: c.id });
  } catch (error) {
    statusNode.textContent = `delete failed: ${error instanceof Error ? error.message : String(error)}`;
    return;
  }
  const entries = [...listNode.querySelectorAll<HTMLElement>("li")];
  const at = entries.findIndex((li) => li.dataset.conversationId === c.id);
  conversations.delete(c.id);
  if (view?.conversationId === c.id) closeView("The conversation was deleted.");
  renderList();
  // Focus goes to the entry that took its place (or the one before it), not back to the page's top.
  const next = listNode.querySelectorAll<HTMLButtonElement>("li button.open");
  (next[Math.min(Math.max(at, 0), next.length - 1)] ?? $("new")).focus();
}

function showNotice(notice: NotificationParams<"notice">): void {
  notices.show({ level: notice.level, code: notice.code, message: notice.message });
}

/** The open conversation's context and cost, after a model call of it finished. */
function onUsage(update: NotificationParams<"usage_updated">): void {
  usage = { usedTokens: update.context.usedTokens, windowTokens: update.context.windowTokens, turn: update.generation, conversation: update.conversation };
  usageMeter.show(usage);
}

/**
 * The meter of a conversation just opened, from its stored totals; the window
 * is its model's declared contextWindow (models.list), unknown until a
 * usage_updated says it when models.list does not.
 */
function initialUsage(c: Conversation): void {
  if (!c.usage) {
    usage = undefined;
    usageMeter.clear();
    return;
  }
  usage = { usedTokens: c.usage.contextTokens, windowTokens: contextWindowOf(c.model), turn: null, conversation: c.usage };
  usageMeter.show(usage);
}

function contextWindowOf(model: string | null): number | null {
  const name = model ?? models?.defaultModel;
  if (!name || !models) return null;
  const found = models.models.find((m) => m.id === name || m.id === `${models!.defaultProvider}/${name}`);
  return found?.capabilities?.contextWindow ?? null;
}

function closeView(reason: string): void {
  view = undefined;
  usage = undefined;
  usageMeter.clear();
  titleNode.textContent = "No conversation open";
  mainNode.replaceChildren(el("p", { class: "hint", text: reason }));
  history.replaceState(null, "", location.pathname + location.search);
  updateControls();
}

/** The model picker's options: the server's default first, then every provider's models. */
async function loadModels(c: AgentwireClient): Promise<void> {
  try {
    models = await c.models.list();
  } catch {
    models = undefined;
  }
  renderModelPicker();
  // The meter shown before models.list answered learns the window now.
  if (usage && usage.windowTokens === null && view) {
    usage.windowTokens = contextWindowOf(conversations.get(view.conversationId)?.model ?? null);
    usageMeter.show(usage);
  }
}

/** Each tool's kind, for the cards of calls read back from records (those carry no kind). */
async function loadTools(c: AgentwireClient): Promise<void> {
  try {
    tools = await c.tools.list();
  } catch {
    tools = undefined;
  }
}

/** The modes a conversation switches between (modes.list). */
async function loadModes(c: AgentwireClient): Promise<void> {
  try {
    modes = await c.modes.list();
  } catch {
    modes = undefined;
  }
  renderModePicker();
}

/** Every mode by name with its description as the tooltip; the current one is settings.mode, else the default. */
function renderModePicker(): void {
  const current = view && conversations.get(view.conversationId);
  const chosen = current?.settings.mode ?? modes?.default ?? "";
  const list = modes?.modes ?? [];
  const options = list.map((m) => el("option", { text: m.name, title: m.description, attrs: { value: m.id } }));
  if (chosen && !list.some((m) => m.id === chosen)) options.push(el("option", { text: chosen, attrs: { value: chosen } }));
  modeSelect.replaceChildren(...options);
  modeSelect.value = chosen;
  const description = list.find((m) => m.id === chosen)?.description;
  modeSelect.title = description ? `Mode: ${description}` : "The conversation's mode";
}

function renderModelPicker(): void {
  const current = view && conversations.get(view.conversationId);
  const chosen = current?.model ?? "";
  const ids = (models?.models ?? []).map((m) => m.id);
  // A conversation may name its model without the provider: show it as the listed id it means.
  const selected = chosen && !ids.includes(chosen) && ids.includes(`${models?.defaultProvider}/${chosen}`) ? `${models?.defaultProvider}/${chosen}` : chosen;
  const options = [el("option", { text: `default${models?.defaultModel ? ` (${models.defaultModel})` : ""}`, attrs: { value: "" } })];
  for (const id of ids) options.push(el("option", { text: id, attrs: { value: id } }));
  if (selected && !ids.includes(selected)) options.push(el("option", { text: selected, attrs: { value: selected } }));
  modelSelect.replaceChildren(...options);
  modelSelect.value = selected;
}

async function open(conversationId: string): Promise<void> {
  const c = client;
  if (!c) return;
  if (view && view.conversationId !== conversationId) {
    await c.conversation.unsubscribe({ conversationId: view.conversationId }).catch(() => {});
  }
  const next = new ConversationView(conversationId, {
    decide: (toolCallId, decision) => decide(conversationId, toolCallId, decision),
    onChange: updateControls,
    onUsage: (update) => view === next && onUsage(update),
    onNotice: showNotice,
    toolKind: (name) => tools?.tools.find((t) => t.name === name)?.kind,
    rewind: (recordId, anchor) => askRewind(next, recordId, anchor),
    removeHeld: (recordId) => void client?.queue.remove({ conversationId, recordId }).catch(showError),
    onRewound: () => void reload(next),
    respond: async (requestId, response) => {
      if (!client) throw new Error("not connected; waiting to reconnect");
      await client.input.respond({ conversationId, requestId, ...response });
    },
  });
  view = next;
  commandMenu.reset();
  // Subscribe first, then read: an event between the two is applied after the load
  // (its seq is above the loaded one), and nothing can fall in between.
  await c.conversation.subscribe({ conversationId });
  const got = await c.conversation.get({ conversationId, includeRecords: true });
  if (view !== next) return;
  next.load(got);
  conversations.set(conversationId, got.conversation);
  initialUsage(got.conversation);
  titleNode.textContent = got.conversation.title || "untitled";
  mainNode.replaceChildren(next.node);
  mainNode.scrollTop = mainNode.scrollHeight; // the latest messages first, as in any chat
  history.replaceState(null, "", `#${encodeURIComponent(conversationId)}`);
  setSidebar(false);
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
  // While the agent works the message box stays usable: Enter steers, Alt+Enter (or Queue) queues.
  sendButton.disabled = !ready;
  sendButton.textContent = generating ? "Steer" : "Send";
  sendButton.title = generating ? "Send into the running turn, at its next model call (Enter)" : "Send (Enter)";
  queueButton.hidden = !generating;
  queueButton.disabled = !ready;
  compactButton.disabled = !ready || generating;
  shortcutsNode.dataset.generating = String(generating);
  interruptButton.hidden = !generating;
  interruptButton.disabled = !ready;
  document.body.dataset.generating = String(generating);
  const current = view && conversations.get(view.conversationId);
  if (current) titleNode.textContent = current.title || "untitled";
  modelSelect.disabled = approvalSelect.disabled = modeSelect.disabled = !ready;
  approvalSelect.value = current?.settings.approval ?? "ask";
  renderModelPicker();
  renderModePicker();
}

$("new").addEventListener("click", async () => {
  if (!client) return;
  const created = await client.conversation.create({ title: "New conversation" });
  conversations.set(created.id, created);
  await open(created.id);
  input.focus();
});

composer.addEventListener("submit", (event) => {
  event.preventDefault();
  void send("steer");
});
queueButton.addEventListener("click", () => void send("queue"));

/**
 * Send what is typed. Idle: append, then step. While a generation runs: the
 * message is steered into it (Enter) or queued for after it (Alt+Enter), guarded
 * by expectedGenerationId; the server holds it and the view shows it pending.
 */
async function send(delivery: "steer" | "queue"): Promise<void> {
  const text = input.value.trim();
  if (!client || !view || !text) return;
  const current = view;
  const conversationId = current.conversationId;
  const busy = current.generating && current.generationId !== null;
  input.value = ""; // at once: a second Enter while the command list loads sends nothing twice
  // `/name args` naming a known template goes as a command: the server expands it and keeps both.
  const command = await commandMenu.commandFor(text);
  if (view !== current) {
    if (!input.value) input.value = text; // switched meanwhile: nothing sent, nothing lost
    return;
  }
  const what = command ?? { content: text };
  const params: MessageAppendParams = {
    conversationId,
    role: "user",
    ...what,
    // The same id on a retry (after a reconnect) answers the stored message instead of adding a second.
    clientMessageId: crypto.randomUUID(),
    ...(busy ? { delivery, expectedGenerationId: current.generationId! } : {}),
  };
  try {
    let answer: MessageAppendResult;
    try {
      answer = await appendSafely(params);
    } catch (error) {
      // The turn ended (or another began) meanwhile: send it as a plain message instead.
      if (!busy || (error as { code?: number }).code !== GENERATION_CHANGED) throw error;
      answer = await appendSafely({ conversationId, role: "user", ...what, clientMessageId: params.clientMessageId });
    }
    if (answer.delivery === "steer" || answer.delivery === "queued") {
      current.addHeld(answer, answer.delivery === "steer" ? "steer" : "queue");
      return;
    }
    // A conversation still called "New conversation" takes its first message as its title.
    if (conversations.get(conversationId)?.title === "New conversation") {
      void client.conversation.update({ conversationId, title: text.slice(0, 60) }).catch(() => {});
    }
    current.generating = true;
    updateControls();
    await client.step({ conversationId });
  } catch (error) {
    if (!input.value) input.value = text; // nothing is lost: the text comes back to be sent again
    if (view === current) current.generating = (await stateOf(conversationId))?.generating ?? false;
    showError(error);
  } finally {
    updateControls();
  }
}

/** GENERATION_CHANGED: expectedGenerationId is not the running generation. */
const GENERATION_CHANGED = -32023;

/** message.append, tried again on the next socket when this one drops (clientMessageId makes that safe). */
async function appendSafely(params: MessageAppendParams): Promise<MessageAppendResult> {
  for (let attempt = 0; ; attempt++) {
    const c = client;
    if (!c) throw new Error("not connected; waiting to reconnect");
    try {
      return await c.message.append(params);
    } catch (error) {
      if (!c.closed || attempt >= 2) throw error;
      await nextClient(c);
    }
  }
}

/** Resolves once a client other than `old` is connected (at most 15 s). */
function nextClient(old: AgentwireClient): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (client && client !== old) resolve();
      else if (Date.now() - started > 15_000) reject(new Error("not connected; the message was not sent"));
      else setTimeout(check, 100);
    };
    check();
  });
}

async function stateOf(conversationId: string) {
  try {
    return (await client?.conversation.get({ conversationId }))?.state;
  } catch {
    return undefined;
  }
}

function showError(error: unknown): void {
  statusNode.textContent = error instanceof Error ? error.message : String(error);
}

/** After conversation_rewound (ours or another client's): the records changed, read them again. */
async function reload(current: ConversationView): Promise<void> {
  if (!client || view !== current) return;
  try {
    const got = await client.conversation.get({ conversationId: current.conversationId, includeRecords: true });
    if (view === current) current.load(got);
  } catch (error) {
    showError(error);
  }
}

/**
 * "Rewind to here": a small form under the message (restore files, checked by
 * default; Rewind / Cancel), then conversation.rewind; its result stays shown.
 */
function askRewind(current: ConversationView, recordId: string, anchor: HTMLElement): void {
  if (anchor.querySelector(".rewind-confirm")) return;
  const restore = el("input", { attrs: { type: "checkbox", checked: "" } });
  const form = el(
    "div",
    { class: "rewind-confirm", attrs: { role: "group", "aria-label": "Rewind" } },
    el("p", { text: "Take back this message and everything after it? The model will not see them again." }),
    el("label", {}, restore, document.createTextNode(" Also restore the files the agent changed since")),
  );
  const go = button("Rewind", () => {
    form.remove();
    void rewind(current, recordId, restore.checked, false);
  }, { class: "primary" });
  form.append(el("div", { class: "row" }, go, button("Cancel", () => form.remove())));
  anchor.append(form);
  go.focus();
}

async function rewind(current: ConversationView, recordId: string, restoreFiles: boolean, force: boolean): Promise<void> {
  if (!client) return;
  let result: ConversationRewindResult;
  try {
    result = await client.conversation.rewind({ conversationId: current.conversationId, beforeRecordId: recordId, restoreFiles, ...(force ? { force } : {}) });
  } catch (error) {
    showError(error);
    return;
  }
  showRewindResult(current, result, recordId, restoreFiles);
  await reload(current); // conversation_rewound reloads too; this one covers a missed event
}

function showRewindResult(current: ConversationView, result: ConversationRewindResult, recordId: string, restoreFiles: boolean): void {
  const lines: HTMLElement[] = [el("p", { text: `Rewound: ${result.recordsRemoved} record${result.recordsRemoved === 1 ? "" : "s"} taken back.` })];
  if (result.filesRestored.length) {
    lines.push(el("p", { text: "Files restored:" }), el("ul", { class: "rewind-files restored" }, ...result.filesRestored.map((f) => el("li", { text: `${f.path} (${f.action})` }))));
  }
  const changed = result.filesNotRestored.filter((f) => f.reason === "changed_on_disk");
  if (result.filesNotRestored.length) {
    lines.push(el("p", { text: "Files left as they are:" }), el("ul", { class: "rewind-files not-restored" }, ...result.filesNotRestored.map((f) => el("li", { text: `${f.path}: ${f.message}` }))));
  }
  if (result.unrestorableCalls.length) {
    lines.push(el("p", { class: "warning", text: `Not undone (their effects stay): ${result.unrestorableCalls.map((c) => c.toolName).join(", ")}.` }));
  }
  const actions = el("div", { class: "row" }, button("Undo rewind", () => void unrewind(current)));
  // A file changed on disk since is only put back when asked: undo the rewind, then rewind again with force.
  if (restoreFiles && changed.length) {
    actions.append(
      button("Restore those files too (force)", async () => {
        if (!client) return;
        try {
          await client.conversation.unrewind({ conversationId: current.conversationId });
        } catch (error) {
          return showError(error);
        }
        await rewind(current, recordId, true, true);
      }),
    );
  }
  actions.append(button("Dismiss", () => current.banner.replaceChildren()));
  current.banner.replaceChildren(el("div", { class: "rewind-result" }, ...lines, actions));
}

async function unrewind(current: ConversationView): Promise<void> {
  if (!client) return;
  try {
    const result = await client.conversation.unrewind({ conversationId: current.conversationId });
    const restored = result.filesRestored.map((f) => f.path).join(", ");
    current.banner.replaceChildren(
      el("div", { class: "rewind-result" }, el("p", { text: `Rewind undone: ${result.recordsRestored} record${result.recordsRestored === 1 ? "" : "s"} back${restored ? `; files put back: ${restored}` : ""}.` }), el("div", { class: "row" }, button("Dismiss", () => current.banner.replaceChildren()))),
    );
  } catch (error) {
    showError(error);
    return;
  }
  await reload(current);
}

/** Compact: the model summarizes the conversation so far (optional instructions say what to keep). */
compactButton.addEventListener("click", async () => {
  if (!client || !view) return;
  const instructions = prompt("Compact this conversation: the model summarizes it, and sees the summary instead from now on.\nWhat should the summary keep? (optional)", "");
  if (instructions === null) return;
  try {
    await client.conversation.compact({ conversationId: view.conversationId, ...(instructions.trim() ? { instructions: instructions.trim() } : {}) });
  } catch (error) {
    showError(error);
  }
});

input.addEventListener("keydown", (event) => {
  // Enter sends (steers while the agent works); Alt+Enter queues; Shift+Enter is a new line;
  // Enter that ends an IME composition is the IME's.
  if (commandMenu.handleKey(event)) return; // the open command menu's arrows, Enter, Tab, Escape
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    void send(event.altKey ? "queue" : "steer");
  }
});

function interrupt(): void {
  if (client && view) void client.interrupt({ conversationId: view.conversationId });
}
interruptButton.addEventListener("click", interrupt);

/**
 * Page-wide keys: Escape closes the conversation list when it covers the page,
 * else interrupts a running generation (from the message box or outside any field); Alt+Y / Alt+N confirm / skip the tool
 * call waiting longest (by key position, so a keyboard layout's Alt characters do not matter).
 */
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") {
    // Escape in another field (the search, a tool's argument editor) is that field's: it must not stop the agent.
    const target = event.target as HTMLElement;
    const ownField = target !== input && (target.matches("input, textarea, select") || target.isContentEditable);
    if (document.body.classList.contains("sidebar-open")) {
      setSidebar(false);
      sidebarToggle.focus();
    } else if (view?.generating && !ownField) {
      interrupt();
    } else return;
    event.preventDefault();
    return;
  }
  if (event.altKey && !event.ctrlKey && !event.metaKey && (event.code === "KeyY" || event.code === "KeyN")) {
    const card = view?.firstPending();
    if (card?.decideByKey(event.code === "KeyY" ? "confirm" : "skip")) event.preventDefault();
  }
});

modelSelect.addEventListener("change", async () => {
  if (!client || !view) return;
  const conversationId = view.conversationId;
  try {
    conversations.set(conversationId, await client.conversation.update({ conversationId, model: modelSelect.value || null }));
  } catch (error) {
    statusNode.textContent = `model not set: ${error instanceof Error ? error.message : String(error)}`;
  }
  updateControls();
});

approvalSelect.addEventListener("change", async () => {
  if (!client || !view) return;
  const conversationId = view.conversationId;
  try {
    const approval = approvalSelect.value as NonNullable<NonNullable<ConversationUpdateParams["settings"]>["approval"]>;
    conversations.set(conversationId, await client.conversation.update({ conversationId, settings: { approval } }));
  } catch (error) {
    statusNode.textContent = `approval not set: ${error instanceof Error ? error.message : String(error)}`;
  }
  updateControls();
});

modeSelect.addEventListener("change", async () => {
  if (!client || !view) return;
  const conversationId = view.conversationId;
  try {
    conversations.set(conversationId, await client.conversation.update({ conversationId, mode: modeSelect.value }));
  } catch (error) {
    statusNode.textContent = `mode not set: ${error instanceof Error ? error.message : String(error)}`;
  }
  updateControls();
});

searchInput.addEventListener("input", renderList);

// A link to a conversation (a sub-agent's, from its spawn_agent card) opens it in place.
window.addEventListener("hashchange", () => {
  const id = decodeURIComponent(location.hash.slice(1));
  if (id && client && view?.conversationId !== id) void open(id).catch(showError);
});

/** On a narrow screen the conversation list is a drawer over the page; on a wide one it is always shown. */
function setSidebar(open: boolean): void {
  document.body.classList.toggle("sidebar-open", open);
  sidebarToggle.setAttribute("aria-expanded", String(open));
  $("backdrop").hidden = !open;
}
sidebarToggle.addEventListener("click", () => {
  const open = !document.body.classList.contains("sidebar-open");
  setSidebar(open);
  if (open) $("new").focus();
});
$("close-sidebar").addEventListener("click", () => {
  setSidebar(false);
  sidebarToggle.focus();
});
$("backdrop").addEventListener("click", () => setSidebar(false));

tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, tokenInput.value.trim());
  tokenInput.value = "";
  statusNode.textContent = "connecting…";
  connection.retryNow();
});

connection.start();
