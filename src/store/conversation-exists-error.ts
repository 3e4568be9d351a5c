/**
 * A create at an id a conversation already has (a client-chosen id of
 * conversation.create, or a concurrent create of the same id). Every store
 * raises this one class, so the handler can answer CONVERSATION_EXISTS
 * without knowing which store it runs on; the create changed nothing.
 */
export class ConversationExistsError extends Error {
  constructor(readonly conversationId: string) {
    super(`conversation ${conversationId} already exists`);
    this.name = "ConversationExistsError";
  }
}
