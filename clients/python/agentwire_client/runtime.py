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
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from typing import Any, Awaitable, Callable, Literal, NamedTuple, Self, TypedDict
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import websockets
from websockets.exceptions import ConnectionClosed

Disposer = Callable[[], None]
"""Call it to remove the handler it was returned for; calling it twice is harmless."""

ConnectionErrorCode = Literal["CONNECTION_CLOSED", "TIMEOUT"]

METHOD_NOT_FOUND = -32601


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
        self._handlers: dict[str, list[Callable[[Any], Any]]] = {}
        self._any_handlers: list[Callable[[str, Any], Any]] = []
        self._close_handlers: list[Callable[[CloseInfo], Any]] = []
        # Handler coroutines run as tasks; holding them keeps them from being collected mid-run.
        self._handler_tasks: set[asyncio.Task[Any]] = set()
        self._connected: Any = None
        self._close_info: CloseInfo | None = None
        self._closing = False
        self._last_error: str | None = None
        self._initialize_result: dict[str, Any] | None = None

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

    async def _handshake(self, url: str, protocol_version: str) -> None:
        """Open the socket and send initialize. Raises AgentwireRpcError when the server refuses,
        AgentwireConnectionError when the socket fails or a step exceeds request_timeout; the
        socket is closed in every failure case. `protocol_version` comes from the generated
        types.py, so this file holds no protocol data."""
        target = _with_token(url, self._token)
        try:
            opening = websockets.connect(target, max_size=self._max_message_bytes)
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
        params: dict[str, Any] = {"protocolVersion": protocol_version}
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
            asyncio.get_running_loop().call_soon(lambda: entry in handlers and self._fire(entry, connected))
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
            asyncio.get_running_loop().call_soon(lambda: entry in self._close_handlers and self._fire(entry, info))
        return _disposer(self._close_handlers, entry)

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

    async def __aexit__(self, *exc: object) -> None:
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


class _Entry:
    """Wraps a handler so the same function registered twice is removed once per disposer."""

    __slots__ = ("handler",)

    def __init__(self, handler: Callable[..., Any]) -> None:
        self.handler = handler

    def __call__(self, *args: Any) -> Any:
        return self.handler(*args)


def _disposer(entries: list[Any], entry: _Entry) -> Disposer:
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
