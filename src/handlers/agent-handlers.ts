import { DEFAULT_MODE } from "../../protocol/mode-table.js";
import type { MethodHandlers } from "./scope-binding.js";

type Handlers = MethodHandlers;

export const step: Handlers["step"] = async (params, { app }, runtime) => {
  // A step asked during conversation.rewind starts on the records the rewind leaves.
  while (runtime.rewinding) await runtime.rewinding;
  return app.agent.step(runtime, params);
};

export const conversationCompact: Handlers["conversation.compact"] = async (params, { app }, runtime) => {
  // As step: a compaction asked during conversation.rewind summarizes what the rewind leaves.
  while (runtime.rewinding) await runtime.rewinding;
  return app.agent.compact(runtime, params);
};

export const interrupt: Handlers["interrupt"] = (params, { app }, runtime) => app.agent.interrupt(runtime, params.keepPending === true);

export const generationWait: Handlers["generation.wait"] = (params, { app, connection }, runtime) =>
  app.agent.waits.wait(runtime, params, connection);

export const toolConfirm: Handlers["tool.confirm"] = (params, { app }, runtime) => app.agent.confirm(runtime, params);

export const inputRespond: Handlers["input.respond"] = (params, { app }, runtime) => app.agent.respondInput(runtime, params);

export const toolsList: Handlers["tools.list"] = (_params, { app }) => app.agent.listTools();

export const modelsList: Handlers["models.list"] = (_params, { app }) => app.agent.listModels();

/** The server's modes (built-in ones as the configuration changed them, then its own). */
export const modesList: Handlers["modes.list"] = async (_params, { app }) => ({ modes: [...app.agent.modes.list], default: DEFAULT_MODE });
