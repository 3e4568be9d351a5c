"""Runtime of the agentwire Python client: connection, request/response matching,
per-call timeout, notification dispatch. Hand-written; the generated methods.py
adds one typed method per request on top of AgentwireClientBase, and the
generated types.py gives the types.

Holds no protocol data (no method names, no version): those come from the
generated files, so this file never goes stale when protocol/ changes.

Works with the `websockets` package from 10.4 (Debian bookworm's
python3-websockets) to the current releases: it uses only `connect`, `send`,
`async for` over incoming frames, `close`, `close_code`/`close_reason`, and
the ConnectionClosed exception, which all of them offer.

Passes `mypy --strict` (test/clients/python-client.test.ts runs it on Debian's mypy 1.0); the package
ships `py.typed`, so a type checker reads these annotations and the generated TypedDicts.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections import deque
from types import TracebackType
from typing import Any, Awaitable, Callable, ClassVar, Generator, Generic, Literal, NamedTuple, Self, TypedDict, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import websockets
from websockets.exceptions import ConnectionClosed

# websockets 10.4 exports `connect` lazily, where a type checker cannot see it (newer releases declare
# it for type checkers too); read the same function through getattr so both type-check alike.
_ws_connect: Callable[..., Awaitable[Any]] = getattr(websockets, "connect")

Disposer = Callable[[], None]
"""Call it to remove the handler it was returned for; calling it twice is harmless."""

ConnectionErrorCode = Literal["CONNECTION_CLOSED", "TIMEOUT"]

METHOD_NOT_FOUND = -32601

DEFAULT_EVENT_BUFFER = 10_000
"""How many notifications an `events()` stream holds for a reader that has not taken them yet."""


class AgentwireRpcError(Exception):
    """An error answered by the server: `code` is a number from ErrorCodes (errors.py), `data` its
    details (for INVALID_PARAMS, `data["issues"]` names each field and problem)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"AgentwireRpcError(code={self.code}, message={self.message!r}, data={self.data!r})"


class AgentwireConnectionError(Exception):
    """A local failure that never crossed the wire, with a string code so it is never mistaken
    for the server's numeric ones: the socket closed (or could not open) before an answer came
    (CONNECTION_CLOSED), or the answer took longer than the call's timeout (TIMEOUT). To abort a
    call, cancel the task awaiting it: asyncio's own cancellation."""

    def __init__(self, code: ConnectionErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: ConnectionErrorCode = code
        self.message = message


class AgentwireEventOverflowError(Exception):
    """An `events()` stream held `max_buffer` notifications its reader had not taken, and another
    came: the stream stopped collecting instead of dropping it silently. The reader first gets every
    notification held, then this error. `last_seq` is the `seq` of the last one it got (None if it
    held none): `conversation.subscribe({"conversationId": ..., "afterSeq": last_seq})` on a fresh
    stream replays what followed, as long as the server still holds it."""

    def __init__(self, conversation_id: str, max_buffer: int, last_seq: int | None) -> None:
        super().__init__(
            f"agentwire client: events({conversation_id!r}) held {max_buffer} notifications not yet read"
            f" and stopped collecting; the last one read had seq {last_seq}. Read faster, pass a larger"
            " max_buffer, or open a new stream and resubscribe with afterSeq"
        )
        self.conversation_id = conversation_id
        self.max_buffer = max_buffer
        self.last_seq = last_seq


class CloseInfo(NamedTuple):
    """How the WebSocket closed."""

    code: int
    """WebSocket close code (1000 normal, 1006 abnormal, 1009 frame too big, …)."""
    reason: str


class ClientOptions(TypedDict, total=False):
    """The keyword options of AgentwireClient.connect (and of the client's constructor)."""

    token: str | None
    """Access token, sent as the `token` query parameter."""
    client_info: dict[str, Any] | None
    """Sent in initialize as `clientInfo`: who is connecting (shown in server.status)."""
    capabilities: dict[str, Any] | None
    """Sent in initialize, e.g. `{"notificationOptOut": ["generation_progress"]}`."""
    experimental_api: bool
    """Adds `capabilities.experimentalApi: true`: methods marked experimental need it."""
    request_timeout: float | None
    """Seconds any request (and the connect steps) may take before TIMEOUT; None (default) waits
    for ever. A call's own `timeout` overrides it."""
    max_message_bytes: int | None
    """The largest frame accepted from the server (default 64 MiB; None: no limit)."""


class AgentwireClientBase:
    """Connection, request/response matching and notification dispatch. The generated
    AgentwireClient (methods.py) adds one typed method per request; use its `connect`.
    State lives in `_`-prefixed attributes so generated members can never collide with it."""

    _protocol_version: ClassVar[str]
    """Sent in initialize; set by the generated AgentwireClient from types.py."""

    def __init__(
        self,
        *,
        token: str | None = None,
        client_info: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        experimental_api: bool = False,
        request_timeout: float | None = None,
        max_message_bytes: int | None = 64 * 1024 * 1024,
    ) -> None:
        """The options are ClientOptions' (above), given as keywords."""
        self._token = token
        self._client_info = client_info
        self._capabilities = capabilities
        self._experimental_api = experimental_api
        self._request_timeout = request_timeout
        self._max_message_bytes = max_message_bytes
        self._socket: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._handlers: dict[str, list[_Entry]] = {}
        self._any_handlers: list[_Entry] = []
        self._close_handlers: list[_Entry] = []
        self._streams: set[EventStream[Any]] = set()
        # Handler coroutines run as tasks; holding them keeps them from being collected mid-run.
        self._handler_tasks: set[asyncio.Task[Any]] = set()
        self._connected: Any = None
        self._close_info: CloseInfo | None = None
        self._closing = False
        self._last_error: str | None = None
        self._initialize_result: dict[str, Any] | None = None

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        client_info: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        experimental_api: bool = False,
        request_timeout: float | None = None,
        max_message_bytes: int | None = 64 * 1024 * 1024,
    ) -> Connecting[Self]:
        """Open a WebSocket to `url` and send initialize with this client's protocol version. Await
        the result for the connected client (`client = await AgentwireClient.connect(url)`), or enter
        it (`async with AgentwireClient.connect(url) as client:`) to have the client closed when the
        block exits. Raises AgentwireRpcError when the server refuses initialize,
        AgentwireConnectionError when the socket fails or a step exceeds request_timeout. The
        options are ClientOptions' (above), given as keywords."""
        client = cls(
            token=token,
            client_info=client_info,
            capabilities=capabilities,
            experimental_api=experimental_api,
            request_timeout=request_timeout,
            max_message_bytes=max_message_bytes,
        )
        return Connecting(client, url)

    @property
    def initialize_result(self) -> Any:
        """What the server answered to initialize (its version, capabilities, connection id)."""
        if self._initialize_result is None:
            raise RuntimeError("agentwire client: not connected yet")
        return self._initialize_result

    @property
    def connection_id(self) -> str:
        """Id of this connection, as shown in server.status."""
        return str(self.initialize_result["connectionId"])

    @property
    def closed(self) -> bool:
        """True once the socket has closed (or close() was called)."""
        return self._closing or self._close_info is not None

    async def _handshake(self, url: str) -> None:
        """Open the socket and send initialize. Raises AgentwireRpcError when the server refuses,
        AgentwireConnectionError when the socket fails or a step exceeds request_timeout; the
        socket is closed in every failure case. The protocol version comes from the generated
        class (`_protocol_version`), so this file holds no protocol data."""
        target = _with_token(url, self._token)
        try:
            opening = _ws_connect(target, max_size=self._max_message_bytes)
            self._socket = await asyncio.wait_for(opening, self._request_timeout)
        except asyncio.TimeoutError:
            self._close_info = CloseInfo(1006, "")
            raise AgentwireConnectionError(
                "TIMEOUT", f"WebSocket did not open within {self._request_timeout} s"
            ) from None
        except (OSError, websockets.exceptions.WebSocketException) as error:
            self._close_info = CloseInfo(1006, "")
            raise AgentwireConnectionError(
                "CONNECTION_CLOSED", f"agentwire connection could not open: {error}"
            ) from error
        self._reader = asyncio.get_running_loop().create_task(self._read())
        params: dict[str, Any] = {"protocolVersion": self._protocol_version}
        if self._client_info is not None:
            params["clientInfo"] = self._client_info
        capabilities = dict(self._capabilities or {})
        if self._experimental_api:
            capabilities["experimentalApi"] = True
        if capabilities:
            params["capabilities"] = capabilities
        try:
            self._initialize_result = await self.request("initialize", params)
        except BaseException:
            await self.close(1000, "connect failed")
            raise

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Send one request and return its result. Raises AgentwireRpcError (the server's answer)
        or AgentwireConnectionError (CONNECTION_CLOSED, TIMEOUT). `timeout` (seconds) overrides
        request_timeout for this call. Cancelling the awaiting task abandons the call; the server
        is not told, the request still runs there."""
        if self.closed or self._socket is None:
            raise self._closed_error()
        request_id = next(self._ids)
        frame = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {} if params is None else params})
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        limit = self._request_timeout if timeout is None else timeout
        try:
            try:
                await self._socket.send(frame)
            except ConnectionClosed:
                raise self._closed_error() from None
            if limit is None:
                return await future
            try:
                return await asyncio.wait_for(future, limit)
            except asyncio.TimeoutError:
                raise AgentwireConnectionError("TIMEOUT", f"{method}: no answer within {limit} s") from None
        finally:
            self._pending.pop(request_id, None)

    def on(self, method: str, handler: Callable[[Any], Any]) -> Disposer:
        """Call `handler` with the params of every `method` notification until the returned
        disposer is called. A coroutine function works too: each call runs as a task."""
        handlers = self._handlers.setdefault(method, [])
        entry = _Entry(handler)
        handlers.append(entry)
        # `connected` is a one-time state, not a stream: a late subscriber still hears it.
        if method == "connected" and self._connected is not None:
            connected = self._connected

            def late() -> None:
                if entry in handlers:
                    self._fire(entry, connected)

            asyncio.get_running_loop().call_soon(late)
        return _disposer(handlers, entry)

    def on_any(self, handler: Callable[[str, Any], Any]) -> Disposer:
        """Call `handler(method, params)` with every notification until the disposer is called."""
        entry = _Entry(handler)
        self._any_handlers.append(entry)
        return _disposer(self._any_handlers, entry)

    def on_close(self, handler: Callable[[CloseInfo], Any]) -> Disposer:
        """Call `handler` once when the socket closes (soon, if it already has)."""
        entry = _Entry(handler)
        self._close_handlers.append(entry)
        info = self._close_info
        if info is not None:

            def late() -> None:
                if entry in self._close_handlers:
                    self._fire(entry, info)

            asyncio.get_running_loop().call_soon(late)
        return _disposer(self._close_handlers, entry)

    def _event_stream(self, conversation_id: str, max_buffer: int) -> EventStream[Any]:
        """The stream behind the generated, typed `events()`: it collects from now on."""
        if max_buffer < 1:
            raise ValueError(f"agentwire client: events() max_buffer must be at least 1, got {max_buffer}")
        stream: EventStream[Any] = EventStream(self, conversation_id, max_buffer)
        if self._close_info is not None:
            stream._end(self._closed_by_us(), self._closed_error())
        else:
            self._streams.add(stream)
        return stream

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the connection and wait until it has closed; pending requests fail with
        CONNECTION_CLOSED."""
        self._closing = True
        if self._socket is not None:
            try:
                await self._socket.close(code, reason)
            except Exception:  # already gone: the reader settles what is left
                pass
        if self._reader is not None:
            await asyncio.shield(self._reader)
        else:
            self._on_close(code, reason)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()

    async def _read(self) -> None:
        try:
            async for frame in self._socket:
                self._on_frame(frame)
        except ConnectionClosed:
            pass  # the close code and reason are read below
        except Exception as error:  # e.g. a frame over max_message_bytes
            self._last_error = str(error)
        finally:
            code = getattr(self._socket, "close_code", None)
            reason = getattr(self._socket, "close_reason", None)
            self._on_close(1006 if code is None else int(code), reason or "")

    def _on_frame(self, frame: str | bytes) -> None:
        try:
            message = json.loads(frame)
        except ValueError:
            return
        for item in message if isinstance(message, list) else [message]:
            self._on_message(item)

    def _on_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._refuse_server_request(message["id"], method)
            else:
                self._dispatch(method, message.get("params"))
            return
        request_id = message.get("id")
        if not isinstance(request_id, int) or request_id not in self._pending:
            return  # id null (the server could not read a frame of ours), or a call already abandoned
        method, future = self._pending.pop(request_id)
        if future.done():
            return
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            code = error.get("code")
            text = error.get("message")
            future.set_exception(
                AgentwireRpcError(
                    code if isinstance(code, int) else 0,
                    text if isinstance(text, str) else f"{method} failed",
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))

    def _refuse_server_request(self, request_id: Any, method: str) -> None:
        """No server→client requests exist in this protocol version."""
        error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
        frame = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})
        self._spawn(self._socket.send(frame))

    def _dispatch(self, method: str, params: Any) -> None:
        if method == "connected":
            self._connected = params
        # Every notification but `connected` names its conversation.
        conversation_id = params.get("conversationId") if isinstance(params, dict) else None
        if conversation_id is not None:
            for stream in list(self._streams):
                if stream.conversation_id == conversation_id:
                    stream._put({"method": method, "params": params})
        for handler in list(self._handlers.get(method, [])):
            self._fire(handler, params)
        for handler in list(self._any_handlers):
            self._fire(handler, method, params)

    def _fire(self, handler: Callable[..., Any], *args: Any) -> None:
        """A failing handler must not starve the others; its error goes to the loop's exception handler."""
        try:
            result = handler(*args)
            if inspect.isawaitable(result):
                self._spawn(result)
        except Exception as error:
            _report(error)

    def _spawn(self, awaitable: Awaitable[Any]) -> None:
        async def run() -> None:
            try:
                await awaitable
            except ConnectionClosed:
                pass
            except Exception as error:
                _report(error)

        task = asyncio.get_running_loop().create_task(run())
        self._handler_tasks.add(task)
        task.add_done_callback(self._handler_tasks.discard)

    def _closed_error(self) -> AgentwireConnectionError:
        info = self._close_info
        how = f"code {info.code}" if info else "closed by the client"
        if info and info.reason:
            how += f', reason "{info.reason}"'
        if self._last_error:
            how += f", error: {self._last_error}"
        return AgentwireConnectionError("CONNECTION_CLOSED", f"agentwire connection closed ({how})")

    def _on_close(self, code: int, reason: str) -> None:
        if self._close_info is not None:
            return
        info = CloseInfo(code, reason)
        self._close_info = info
        error = self._closed_error()
        for request_id in list(self._pending):
            _, future = self._pending.pop(request_id)
            if not future.done():
                future.set_exception(error)
        for handler in list(self._close_handlers):
            self._fire(handler, info)
        for stream in list(self._streams):
            stream._end(self._closed_by_us(), error)
        self._streams.clear()

    def _closed_by_us(self) -> bool:
        return self._closing


C = TypeVar("C", bound=AgentwireClientBase)
E = TypeVar("E")


class Connecting(Generic[C]):
    """What `connect()` returns: awaitable (the connected client) and an async context manager
    (the connected client, closed when the block exits, also on an error)."""

    def __init__(self, client: C, url: str) -> None:
        self._client = client
        self._url = url
        self._started = False

    async def _open(self) -> C:
        if self._started:
            raise RuntimeError("agentwire client: this connect() was already awaited")
        self._started = True
        await self._client._handshake(self._url)
        return self._client

    def __await__(self) -> Generator[Any, None, C]:
        return self._open().__await__()

    async def __aenter__(self) -> C:
        return await self._open()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self._client.close()


class EventStream(Generic[E]):
    """The notifications of one conversation, in the order they came, as an async iterator:
    `async for event in client.events(conversation_id):` — each event is
    `{"method": ..., "params": ...}`, typed by the generated AgentwireClient.events.

    It collects from the moment `events()` is called (call it before `step`, so nothing is missed),
    and only what this connection receives: subscribe to the conversation (conversation.subscribe)
    for its events to come. It holds at most `max_buffer` unread notifications; one more ends the
    collecting, and the reader gets what is held, then AgentwireEventOverflowError (nothing is
    dropped silently). When the connection closes the reader gets what is held, then the iteration
    ends: cleanly when this client closed it (close(), or leaving `async with`), with
    AgentwireConnectionError (CONNECTION_CLOSED) when the server or the network did. `close()` (or
    leaving `async with client.events(...) as events:`) stops collecting and ends the iteration at
    once, the unread notifications discarded. Several streams on one conversation each get every
    notification; the `on` callbacks keep working beside them."""

    def __init__(self, client: AgentwireClientBase, conversation_id: str, max_buffer: int) -> None:
        self._client = client
        self.conversation_id = conversation_id
        """The conversation whose notifications this stream collects."""
        self.max_buffer = max_buffer
        """The most unread notifications held."""
        self._buffer: deque[E] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._last_seq: int | None = None
        self._overflow: AgentwireEventOverflowError | None = None
        # Set once no more notifications will come: None to end the iteration, or the error to raise.
        self._ended = False
        self._end_error: BaseException | None = None

    @property
    def pending(self) -> int:
        """How many notifications are held, not yet read."""
        return len(self._buffer)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> E:
        while True:
            if self._buffer:
                return self._buffer.popleft()
            if self._overflow is not None:
                raise self._overflow
            if self._ended:
                if self._end_error is not None:
                    raise self._end_error
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def close(self) -> None:
        """Stop collecting; the iteration ends at once (also a reader waiting now), unread
        notifications discarded. Calling it twice is harmless."""
        self._buffer.clear()
        self._overflow = None
        self._end(True, None)
        self._end_error = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _put(self, event: E) -> None:
        if self._ended:
            return
        if len(self._buffer) >= self.max_buffer:
            self._overflow = AgentwireEventOverflowError(self.conversation_id, self.max_buffer, self._last_seq)
            self._end(True, None)
            return
        self._buffer.append(event)
        params: Any = event["params"] if isinstance(event, dict) else None
        seq = params.get("seq") if isinstance(params, dict) else None
        if isinstance(seq, int):
            self._last_seq = seq
        self._wake()

    def _end(self, clean: bool, error: BaseException | None) -> None:
        """No more notifications come: the reader ends after what is held (raising `error` unless `clean`)."""
        if self._ended:
            return
        self._ended = True
        self._end_error = None if clean else error
        self._client._streams.discard(self)
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class _Entry:
    """Wraps a handler so the same function registered twice is removed once per disposer."""

    __slots__ = ("handler",)

    def __init__(self, handler: Callable[..., Any]) -> None:
        self.handler = handler

    def __call__(self, *args: Any) -> Any:
        return self.handler(*args)


def _disposer(entries: list[_Entry], entry: _Entry) -> Disposer:
    def dispose() -> None:
        if entry in entries:
            entries.remove(entry)

    return dispose


def _report(error: Exception) -> None:
    asyncio.get_running_loop().call_exception_handler(
        {"message": "agentwire client: a notification handler raised", "exception": error}
    )


def _with_token(url: str, token: str | None) -> str:
    """The URL with `token` as a query parameter (replacing one already there)."""
    if token is None:
        return url
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "token"]
    query.append(("token", token))
    return urlunsplit(parts._replace(query=urlencode(query)))
