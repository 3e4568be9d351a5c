/**
 * A question to the user (input_requested, or state.pendingInputs after a
 * reload) as a card: the question; its choices as buttons (checkboxes and a
 * submit with `multiple`), a form from its restricted `schema` (string,
 * number, integer, boolean and enum fields, required ones marked), a hidden
 * field for a `secret` answer, or a free text field; Answer / Decline /
 * Cancel. input.respond's refusal (a field that does not fit, the question
 * no longer open) is shown on the card. input_resolved closes it: "answered
 * in another client" when this page did not send the ending. A secret answer
 * is cleared from its field as it is sent and never shown.
 */
import type { InputRespondParams } from "../typescript/index.js";
import { button, el } from "./dom.js";

type InputRequest = {
  requestId: string;
  toolCallId?: string;
  source: "ask_user" | "mcp";
  server?: string;
  question: string;
  choices?: string[];
  multiple?: boolean;
  secret?: boolean;
  schema?: { type: "object"; properties: Record<string, FormField>; required?: string[] };
};
type FormField =
  | { type: "string"; title?: string; description?: string; enum?: string[]; enumNames?: string[]; minLength?: number; maxLength?: number; format?: string; default?: string }
  | { type: "number" | "integer"; title?: string; description?: string; minimum?: number; maximum?: number; default?: number }
  | { type: "boolean"; title?: string; description?: string; default?: boolean };
type Outcome = "answered" | "declined" | "cancelled";
export type InputResponse = Omit<InputRespondParams, "conversationId" | "requestId">;

/** INPUT_NOT_PENDING: the question was already answered, declined or cancelled. */
const INPUT_NOT_PENDING = -32027;

let counter = 0;

export class QuestionCard {
  readonly node: HTMLElement;
  readonly #body = el("div", { class: "question-body" });
  readonly #error = el("div", { class: "question-error", attrs: { role: "alert" } });
  readonly #status = el("p", { class: "question-status", attrs: { role: "status" } });
  /** The ending this page sent (its own answer is "answered", another client's "answered in another client"). */
  #sent: Outcome | undefined;
  #busy = false;
  #closed = false;
  /** The fields to clear when the card closes (a secret must not linger in the DOM). */
  readonly #inputs: HTMLInputElement[] = [];

  constructor(
    readonly request: InputRequest,
    private readonly respond: (response: InputResponse) => Promise<void>,
  ) {
    const id = `question-${++counter}`;
    const from = request.source === "mcp" ? `${request.server ?? "An MCP server"} asks` : "The agent asks";
    this.node = el(
      "section",
      { class: "question-card", attrs: { "data-request-id": request.requestId, "aria-labelledby": id, "data-state": "open" } },
      el("div", { class: "question-from", text: from }),
      el("p", { class: "question-text", text: request.question, attrs: { id } }),
      this.#body,
      this.#error,
      this.#status,
    );
    if (request.toolCallId) this.node.dataset.toolCallId = request.toolCallId;
    this.#build();
  }

  #build(): void {
    const r = this.request;
    const endButtons = [button("Decline", () => void this.#send({ action: "decline" })), button("Cancel", () => void this.#send({ action: "cancel" }))];
    if (r.choices && !r.multiple) {
      const choices = r.choices.map((choice) => button(choice, () => void this.#send({ action: "answer", answer: choice }), { class: "choice" }));
      this.#body.append(el("div", { class: "question-choices", attrs: { role: "group", "aria-label": "Choices" } }, ...choices), el("div", { class: "row" }, ...endButtons));
      return;
    }
    const form = el("form", { class: "question-form" });
    let collect: () => InputResponse["answer"] | undefined;
    if (r.choices && r.multiple) {
      const boxes = r.choices.map((choice) => {
        const box = this.#input({ type: "checkbox", value: choice });
        return { box, label: el("label", { class: "choice" }, box, document.createTextNode(` ${choice}`)) };
      });
      form.append(el("fieldset", { class: "question-choices" }, el("legend", { text: "Pick any" }), ...boxes.map((b) => b.label)));
      collect = () => boxes.filter((b) => b.box.checked).map((b) => b.box.value);
    } else if (r.schema) {
      collect = this.#schemaFields(form, r.schema);
    } else {
      const field = this.#input({ type: r.secret ? "password" : "text", autocomplete: "off", "aria-label": r.secret ? "Secret answer" : "Answer", maxlength: "10000" });
      form.append(field);
      collect = () => field.value;
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const answer = collect();
      if (answer !== undefined) void this.#send({ action: "answer", answer });
    });
    form.append(el("div", { class: "row" }, el("button", { text: "Answer", attrs: { type: "submit", class: "primary" } }), ...endButtons));
    this.#body.append(form);
  }

  #input(attrs: Record<string, string>): HTMLInputElement {
    const node = el("input", { attrs });
    this.#inputs.push(node);
    return node;
  }

  /** One labelled control per field; returns what reads the answer (undefined, with the error shown, when a required field is empty). */
  #schemaFields(form: HTMLFormElement, schema: NonNullable<InputRequest["schema"]>): () => InputResponse["answer"] | undefined {
    const required = new Set(schema.required ?? []);
    const readers: Array<[string, () => string | number | boolean | undefined]> = [];
    for (const [name, field] of Object.entries(schema.properties)) {
      const id = `field-${++counter}`;
      const label = el("label", { attrs: { for: id } }, document.createTextNode(field.title || name));
      if (required.has(name)) label.append(el("span", { class: "required", text: " *", attrs: { "aria-hidden": "true" } }));
      let control: HTMLInputElement | HTMLSelectElement;
      let read: () => string | number | boolean | undefined;
      if (field.type === "boolean") {
        const box = this.#input({ type: "checkbox", id });
        box.checked = field.default ?? false;
        control = box;
        read = () => box.checked;
      } else if (field.type === "string" && field.enum) {
        const names = field.enumNames ?? [];
        const select = el("select", { attrs: { id } }, ...(required.has(name) ? [] : [el("option", { text: "—", attrs: { value: "" } })]), ...field.enum.map((v, i) => el("option", { text: names[i] ?? v, attrs: { value: v } })));
        if (field.default !== undefined) select.value = field.default;
        control = select;
        read = () => select.value || undefined;
      } else if (field.type === "number" || field.type === "integer") {
        const box = this.#input({ type: "number", id, step: field.type === "integer" ? "1" : "any" });
        if (field.minimum !== undefined) box.min = String(field.minimum);
        if (field.maximum !== undefined) box.max = String(field.maximum);
        if (field.default !== undefined) box.value = String(field.default);
        control = box;
        read = () => (box.value === "" ? undefined : Number(box.value));
      } else {
        const text = field as Extract<FormField, { type: "string" }>;
        const type = text.format === "email" ? "email" : text.format === "uri" ? "url" : text.format === "date" ? "date" : text.format === "date-time" ? "datetime-local" : "text";
        const box = this.#input({ type, id, autocomplete: "off" });
        if (text.maxLength !== undefined) box.maxLength = text.maxLength;
        if (text.default !== undefined) box.value = text.default;
        control = box;
        read = () => box.value || undefined;
      }
      if (required.has(name)) control.setAttribute("aria-required", "true");
      control.name = name;
      const row = el("div", { class: `question-field${field.type === "boolean" ? " boolean" : ""}` }, label, control);
      if (field.description) {
        const hint = el("span", { class: "hint", text: field.description, attrs: { id: `${id}-hint` } });
        control.setAttribute("aria-describedby", hint.id);
        row.append(hint);
      }
      form.append(row);
      readers.push([name, read]);
    }
    return () => {
      const answer: Record<string, string | number | boolean> = {};
      const missing: string[] = [];
      for (const [name, read] of readers) {
        const value = read();
        if (value === undefined) {
          if (required.has(name)) missing.push(schema.properties[name]?.title || name);
        } else answer[name] = value;
      }
      if (missing.length) {
        this.#error.textContent = `Required: ${missing.join(", ")}`;
        return undefined;
      }
      return answer;
    };
  }

  async #send(response: InputResponse): Promise<void> {
    if (this.#busy || this.#closed) return;
    this.#busy = true;
    this.#error.textContent = "";
    this.node.setAttribute("aria-busy", "true");
    // A secret leaves its field at once: it is in the request, nowhere on the page.
    if (this.request.secret) for (const input of this.#inputs) input.value = "";
    try {
      this.#sent = outcomeOf(response.action);
      await this.respond(response);
      this.close(this.#sent);
    } catch (error) {
      this.#sent = undefined;
      const e = error as { message?: string; code?: number; data?: { outcome?: Outcome } };
      // The question ended elsewhere (INPUT_NOT_PENDING): nothing left to answer here, the reason stays shown.
      if (e.code === INPUT_NOT_PENDING) this.close(e.data?.outcome);
      this.#error.textContent = e.message ?? String(error);
    } finally {
      this.#busy = false;
      this.node.removeAttribute("aria-busy");
    }
  }

  /** The question ended: input_resolved (outcome known) or this page's own answer. */
  close(outcome: Outcome | undefined): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    for (const input of this.#inputs) input.value = "";
    this.#body.replaceChildren();
    const mine = outcome !== undefined && this.#sent === outcome;
    this.node.dataset.state = outcome ?? "closed";
    this.#status.textContent =
      outcome === undefined
        ? "No longer open."
        : mine
          ? outcome === "answered"
            ? this.request.secret
              ? "Answered (secret, not shown)."
              : "Answered."
            : outcome === "declined"
              ? "Declined."
              : "Cancelled."
          : outcome === "answered"
            ? "Answered in another client."
            : outcome === "declined"
              ? "Declined in another client."
              : "Cancelled.";
  }

  get closed(): boolean {
    return this.#closed;
  }
}

function outcomeOf(action: InputResponse["action"]): Outcome {
  return action === "decline" ? "declined" : action === "cancel" ? "cancelled" : "answered";
}
