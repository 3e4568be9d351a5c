import type { RequestContext } from "../app.js";
import type { HandlerTable } from "../rpc/dispatcher.js";

type Handlers = HandlerTable<RequestContext>;

export const step: Handlers["step"] = async (params, { app }) => {
  const runtime = await app.hub.get(params.conversationId);
  return app.agent.stepChecked(runtime, params);
};

export const interrupt: Handlers["interrupt"] = async (params, { app }) => {
  const runtime = await app.hub.get(params.conversationId);
  return app.agent.interrupt(runtime);
};

export const generationWait: Handlers["generation.wait"] = async (params, { app, connection }) => {
  const runtime = await app.hub.get(params.conversationId);
  return app.agent.waits.wait(runtime, params, connection);
};

export const toolConfirm: Handlers["tool.confirm"] = async (params, { app }) => {
  const runtime = await app.hub.get(params.conversationId);
  return app.agent.confirm(runtime, params);
};

export const toolsList: Handlers["tools.list"] = (_params, { app }) => app.agent.listTools();

export const modelsList: Handlers["models.list"] = (_params, { app }) => app.agent.listModels();
