/**
 * `agentwire chat [PROMPT]`: the terminal and scripting client. Wires the
 * session (chat-session.ts) to the process: where the prompt comes from
 * (argument, stdin, or a REPL on a terminal), how output is shown (text or
 * NDJSON), how tools are decided, Ctrl-C, and the exit status
 * (0 completed, 1 error, 2 usage, 130 interrupted).
 */
import type { Interface } from "node:readline/promises";
import type { ToolPendingNotification } from "../../clients/typescript/index.js";
import type { ChatArgs } from "./chat-options.js";
import { ChatSession, describeError, exitCodeOf, type SessionView, type ToolDecider, type TurnInput, type TurnOutcome } from "./chat-session.js";
import { ConnectError, connectOrEmbed, type OpenConnection } from "./connect-or-embed.js";
import { lastConversationIn } from "./last-conversation.js";
import { MCP_WAIT_MS, mcpProblems, waitForMcpServers } from "./mcp-wait.js";
import { NdjsonView } from "./ndjson-view.js";
import { PromptGate, runRepl } from "./repl.js";
import { palette, wantsColor } from "./render.js";
import { Spinner } from "./spinner.js";
import { TerminalView } from "./terminal-view.js";
import { fixedDecider, TerminalToolPrompt } from "./tool-prompt.js";
import { decliningAsker, type InputAsker, TerminalInputPrompt } from "./input-prompt.js";
import { MutableOutput } from "./mute-output.js";

export interface ChatIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const defaultIo = (): ChatIo => ({
  // Made (a stream over fd 0) at its first use: a prompt given with --json never reads stdin, and never pays for it.
  get stdin() {
    return process.stdin;
  },
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});

async function readAll(stream: NodeJS.ReadStream): Promise<string> {
  let text = "";
  stream.setEncoding("utf8");
  for await (const chunk of stream) text += chunk;
  return text;
}

/** Runs the command; resolves with the exit status. */
export async function runChat(args: ChatArgs, io: ChatIo = defaultIo()): Promise<number> {
  const { stdout, stderr } = io;
  const canAsk = !args.json && io.stdin.isTTY === true;
  const repl = canAsk && stdout.isTTY === true;
  let prompt = args.prompt;
  if (prompt === undefined && !io.stdin.isTTY) prompt = (await readAll(io.stdin)).trim();
  if (!prompt && !repl) {
    stderr.write("agentwire: chat needs a PROMPT (an argument, or on stdin)\nRun agentwire --help for usage.\n");
    return 2;
  }

  const colors = palette(wantsColor(stderr, io.env));
  const spinner = new Spinner(stderr, !args.json && stderr.isTTY === true);
  const willAsk = canAsk && args.tools === "ask";
  const terminal = args.json ? undefined : new TerminalView(stdout, stderr, colors, spinner, willAsk);
  const ndjson = args.json ? new NdjsonView(stdout) : undefined;
  const view: SessionView = (ndjson ?? terminal)!;

  let connection: OpenConnection;
  try {
    connection = await connectOrEmbed(args.target, "agentwire-chat");
  } catch (error) {
    const message = error instanceof ConnectError ? error.message : describeError(error);
    if (ndjson) ndjson.end({ kind: "error", message });
    stderr.write(`agentwire: ${message}\n`);
    return 1;
  }

  // What the server left out at start (an untrusted agentwire.json…): said before the agent runs anything.
  for (const notice of connection.client.initializeResult.notices ?? []) stderr.write(`${colors.yellow(`agentwire: ${notice.message}`)}\n`);

  // The readline writes through a mutable output: a secret answer is typed without echo.
  const rlOutput = canAsk ? new MutableOutput(stderr) : undefined;
  // readline (Node's, several modules) is loaded only for a terminal that can be asked: never by --json or a pipe.
  const rl: Interface | undefined = canAsk ? (await import("node:readline/promises")).createInterface({ input: io.stdin, output: rlOutput, terminal: true }) : undefined;
  const gate = new PromptGate();
  const stopSpinner = () => spinner.stop();
  if (rl && repl) {
    // A key typed while the spinner turns stops it before readline echoes the key; it stays off while the line has text.
    spinner.quietWhile(() => rl.line !== "");
    io.stdin.prependListener("keypress", stopSpinner);
  }
  const decider = chooseDecider(args, rl, colors, spinner, io, terminal, gate);
  const asker = chooseAsker(rl, rlOutput, colors, io, terminal, gate);
  const autoConfirm = args.tools === "yes" ? true : args.auto;
  let wakeForOther: (() => void) | undefined;
  const session = new ChatSession(connection.client, {
    view,
    decider,
    autoConfirm,
    model: args.model,
    asker,
    askPendingInputs: repl,
    onOtherGeneration: () => {
      wakeForOther?.();
      wakeForOther = undefined;
    },
  });

  // Ctrl-C: the first interrupts the running generation, a second one (or one with nothing running) exits.
  let interruptAsked = false;
  let stopRepl: (() => void) | undefined;
  const exitNow = (code: number) => {
    spinner.stop();
    rl?.close();
    process.exit(code);
  };
  const onCtrlC = () => {
    if (session.generating && !interruptAsked) {
      interruptAsked = true;
      terminal?.note("interrupting… (Ctrl-C again to quit)");
      void session.interrupt();
    } else if (stopRepl) {
      stopRepl();
    } else {
      exitNow(130);
    }
  };
  process.on("SIGINT", onCtrlC);
  rl?.on("SIGINT", onCtrlC);
  // The reader went away (`agentwire chat … | head -1`): nobody is left to show the rest to.
  const onStdoutError = (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") exitNow(1);
  };
  stdout.on("error", onStdoutError);

  let code: number;
  try {
    let conversationId = args.conversationId;
    if (args.continueLast) {
      const last = await lastConversationIn(connection.client, io.cwd);
      if (!last) throw new NothingToContinue(`no conversation to continue: none has ${io.cwd} as its workspace (start one with agentwire chat PROMPT)`);
      conversationId = last.id;
    }
    await session.open({
      conversationId,
      workspace: io.cwd,
      title: prompt ? prompt.split("\n")[0]!.slice(0, 80) : undefined,
      model: args.model,
      mode: args.mode,
    });
    let outcome: TurnOutcome | undefined;
    // The model is offered the MCP servers' tools from the first step: wait (bounded) for their first connection.
    let toolsReady: Promise<void> | undefined;
    const awaitMcp = async () => {
      const servers = await waitForMcpServers(connection.client, { timeoutMs: MCP_WAIT_MS });
      if (!servers?.length) return;
      ndjson?.result("mcp.list", { servers });
      for (const line of mcpProblems(servers, MCP_WAIT_MS)) stderr.write(`${colors.yellow(`agentwire: ${line}`)}\n`);
    };
    const runTurn = async (text: TurnInput) => {
      await (toolsReady ??= awaitMcp());
      interruptAsked = false;
      outcome = await session.turn(text, outcome === undefined ? args.attachments : []);
      return outcome;
    };
    // A prompt "/NAME ARGS" naming a prompt template is that command, as on the REPL's input line.
    const first = prompt ? await templateCommand(connection.client, session.conversation!.id, prompt) : undefined;
    if (!repl) {
      if (first) await runTurn(first);
    } else {
      terminal?.note(`conversation ${session.conversation!.id} — Ctrl-D to end, /help for commands`);
      // A turn runs while the prompt stays open: a line typed meanwhile steers it (see repl.ts).
      const ended = await runRepl(
        {
          rl: rl!,
          session,
          client: connection.client,
          gate,
          colors,
          note: (text) => terminal?.note(text),
          fail: (text) => terminal?.note(colors.red(text)),
          runTurn,
          follow: async (generationId) => {
            interruptAsked = false;
            outcome = await session.follow(generationId);
            return outcome;
          },
          onStop: (stop) => (stopRepl = stop),
          otherGeneration: () => new Promise<void>((resolve) => (wakeForOther = resolve)),
        },
        first ? runTurn(first) : undefined,
      );
      if (ended) outcome = ended;
    }
    code = outcome ? exitCodeOf(outcome) : 0;
    ndjson?.end(outcome ?? { kind: "completed" });
    if (outcome?.kind === "error" && terminal === undefined) stderr.write(`agentwire: ${outcome.message}\n`);
  } catch (error) {
    // open() failed (unknown conversation, bad model name…): the view has shown the request's error.
    ndjson?.end({ kind: "error", message: describeError(error) });
    // Nothing to continue: no request failed, so no view has said it.
    if (error instanceof NothingToContinue) stderr.write(`agentwire: ${describeError(error)}\n`);
    code = 1;
  } finally {
    process.off("SIGINT", onCtrlC);
    stdout.off("error", onStdoutError);
    if (rl && repl) io.stdin.off("keypress", stopSpinner);
    spinner.stop();
    rl?.close();
  }
  await connection.close().catch(() => {});
  return code;
}

/**
 * Questions (input_requested): asked on a terminal; declined at once without
 * one (--json, stdin not a terminal), saying so on stderr, so a script never
 * hangs on a question.
 */
function chooseAsker(
  rl: Interface | undefined,
  output: MutableOutput | undefined,
  colors: ReturnType<typeof palette>,
  io: ChatIo,
  terminal: TerminalView | undefined,
  gate: PromptGate,
): InputAsker {
  if (rl && output) {
    return new TerminalInputPrompt({
      rl,
      err: io.stderr,
      colors,
      mute: (on) => (output.muted = on),
      ...holdingTerminal(gate, terminal),
    });
  }
  return decliningAsker((text) => (terminal ? terminal.note(`agentwire: ${text}`) : io.stderr.write(`agentwire: ${text}\n`)));
}

/** Around a question on the terminal: the prompt gate shut and the live output held until it is answered. */
function holdingTerminal(gate: PromptGate, terminal: TerminalView | undefined): { beforeAsk: () => void; afterAsk: () => void } {
  return {
    beforeAsk: () => {
      gate.beforeAsk();
      terminal?.endLine();
      terminal?.hold();
    },
    afterAsk: () => {
      terminal?.release();
      gate.afterAsk();
    },
  };
}

/** --continue found no conversation of this workspace. */
class NothingToContinue extends Error {}

function chooseDecider(
  args: ChatArgs,
  rl: Interface | undefined,
  colors: ReturnType<typeof palette>,
  spinner: Spinner,
  io: ChatIo,
  terminal: TerminalView | undefined,
  gate: PromptGate,
): ToolDecider {
  if (args.tools === "yes") return fixedDecider("confirm");
  if (args.tools === "deny") return fixedDecider("skip");
  if (rl) {
    return new TerminalToolPrompt({
      rl,
      err: io.stderr,
      colors,
      env: io.env,
      ...holdingTerminal(gate, terminal),
      setRawMode: (raw) => io.stdin.setRawMode?.(raw),
    });
  }
  // Nobody to ask: skip, and say how to let tools run.
  const skip = fixedDecider("skip");
  return {
    decide: (call: ToolPendingNotification, from?: { subAgent?: string }) => {
      const whose = from?.subAgent ? ` (sub-agent ${from.subAgent})` : "";
      terminal?.note(`no terminal to ask about ${call.toolName}${whose}: skipped (pass --yes, --auto N or --deny to decide)`);
      return skip.decide(call);
    },
  };
}

/**
 * The prompt as a template command when it is "/NAME ARGS" and NAME is one of commands.list (the
 * workspace's or the user's); otherwise the text as it is, so "/etc/hosts: what is in it?" or an
 * unknown "/word" is still sent as written.
 */
async function templateCommand(client: OpenConnection["client"], conversationId: string, prompt: string): Promise<TurnInput> {
  const match = /^\/([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+([\s\S]*))?$/.exec(prompt.trim());
  if (!match) return prompt;
  const { commands } = await client.commands.list({ conversationId });
  if (!commands.some((c) => c.name === match[1])) return prompt;
  return { command: match[1]!, arguments: (match[2] ?? "").trim() };
}
