"""Ask an agentwire server one question and print the answer as it streams, confirming every tool
call the model asks for. Usage: python chat.py [URL] [PROMPT]"""

import asyncio
import sys

from agentwire_client import AgentwireClient


async def main(url: str, prompt: str) -> None:
    async with AgentwireClient.connect(url) as client:
        conversation_id = (await client.conversation.create({"title": "demo"}))["id"]
        await client.conversation.subscribe({"conversationId": conversation_id})
        # Opened before the step, so it holds every notification of it.
        async with client.events(conversation_id) as events:
            await client.message.append({"conversationId": conversation_id, "role": "user", "content": prompt})
            await client.step({"conversationId": conversation_id})
            async for event in events:
                if event["method"] == "generation_progress" and event["params"]["kind"] == "text":
                    print(event["params"]["delta"], end="", flush=True)
                elif event["method"] == "tool_pending":
                    call_id = event["params"]["toolCallId"]
                    await client.tool.confirm({"conversationId": conversation_id, "toolCallId": call_id, "action": "confirm"})
                elif event["method"] == "error":
                    sys.exit(f"the generation failed: {event['params']['message']}")
                elif event["method"] == "generation_complete" and event["params"]["final"]:
                    break
    print()


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "ws://127.0.0.1:8765"
    prompt = sys.argv[2] if len(sys.argv) > 2 else "What is in this directory?"
    asyncio.run(main(url, prompt))
