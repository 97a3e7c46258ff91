"""A provider's HTTP API on an event loop: `ledger serve` asks for its links there.

The same calls, answers and failures as `http.Client` (whose host, headers, timeout and answer
checks it uses), over asyncio's streams instead of a thread each: a link call costs serve's
process ~50 us of CPU here against 220-440 us in a thread, and takes no GIL turns from the
writer thread (docs/bench.md, "Serve's link calls on its event loop").

HTTP/1.1 only as the providers' APIs answer it: a status line, headers, then a body of
`Content-Length` bytes, or chunked, or (no length given) up to the connection's end. Connections
are kept alive and used by one call at a time; one the provider closed is not reused. An answer
this client cannot read whole, or reads only in part, closes its connection: the call failed.
"""
from __future__ import annotations

import asyncio
from typing import Any, Mapping

from ledger.providers.base import ProviderUnavailable
from ledger.providers.http import Client, answer_bytes_max, idle_connections_max

head_bytes_max = 16 * 1024  # a status line and headers; more is not an answer of the providers
interim_answers_max = 4  # 1xx answers passed over before the real one
_BODILESS = frozenset({204, 304})
_TOO_LARGE = b"\0" * (answer_bytes_max + 1)  # an answer longer than a provider's: not read, never JSON


class Malformed(Exception):
    """What came back is not an HTTP/1.1 answer this client reads."""


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    def usable(self) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing())

    def close(self) -> None:
        self.writer.close()


class AsyncClient:
    """`call` as `Client.call`, awaited on the running loop (connections belong to that loop)."""

    def __init__(self, client: Client):
        self.client = client
        self._idle: list[_Connection] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"AsyncClient({self.client.name!r})"  # never the headers

    async def call(self, method: str, path: str, *, json: Any = None, form: dict[str, str] | None = None,
                   headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        c = self.client
        body, sent = c.request(json, form, headers)
        request = _encoded(method, c.prefix + path, _host(c.host, c.port, c.tls is not None), sent, body)
        try:
            async with asyncio.timeout(c.timeout_s):
                status, reason, content = await self._exchange(request)
        except TimeoutError:
            raise ProviderUnavailable(f"{c.name} {method} {path}: no answer in time") from None
        except (OSError, EOFError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, Malformed) as exc:
            raise ProviderUnavailable(f"{c.name} {method} {path}: {type(exc).__name__}") from None
        return c.answered(method, path, status, reason, content)

    async def _exchange(self, request: bytes) -> tuple[int, str, bytes]:
        conn = await self._take()
        try:
            conn.writer.write(request)
            await conn.writer.drain()
            status, reason, content, keep = await _answer(conn.reader)
        except BaseException:  # a timeout's cancellation too: what is left on it is unknown
            conn.close()
            raise
        if keep and len(self._idle) < idle_connections_max:
            self._idle.append(conn)
        else:
            conn.close()
        return status, reason, content

    async def _take(self) -> _Connection:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # connections of another (ended) loop cannot be used here
            self._idle, self._loop = [], loop
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                return conn
            conn.close()  # the provider closed it while idle
        c = self.client
        reader, writer = await asyncio.open_connection(c.host, c.port or (443 if c.tls else 80), ssl=c.tls,
                                                       limit=head_bytes_max)
        return _Connection(reader, writer)

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _host(host: str, port: int | None, tls: bool) -> str:
    name = f"[{host}]" if ":" in host else host
    return name if port is None or port == (443 if tls else 80) else f"{name}:{port}"


def _encoded(method: str, target: str, host: str, headers: Mapping[str, str], body: bytes | None) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body or b'')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]  # `Client.request` checked them
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict") + (body or b"")


async def _answer(reader: asyncio.StreamReader) -> tuple[int, str, bytes, bool]:
    """Status, reason, body (at most `answer_bytes_max` + 1 bytes), and whether the connection
    can carry another call. Interim answers (1xx: a `100 Continue` nobody asked for) are passed
    over, at most `interim_answers_max` of them."""
    for _ in range(interim_answers_max + 1):
        status, reason, fields, keep = await _head(reader)
        if not 100 <= status < 200:
            content = await _body(reader, status, fields)
            return status, reason, content, keep and _whole(fields) and content is not _TOO_LARGE
    raise Malformed("interim answers")


async def _head(reader: asyncio.StreamReader) -> tuple[int, str, dict[str, str], bool]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    status_line, *lines = head[:-4].split("\r\n")
    version, _, rest = status_line.partition(" ")
    code, _, reason = rest.partition(" ")
    if version not in ("HTTP/1.1", "HTTP/1.0") or len(code) != 3 or not code.isdigit():
        raise Malformed("status line")
    fields: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        name = name.strip().lower()
        if not colon or not name or (name in fields and name in ("content-length", "transfer-encoding")):
            raise Malformed("header")
        fields[name] = value.strip()
    keep = version == "HTTP/1.1" and "close" not in fields.get("connection", "").lower()
    return int(code), reason, fields, keep


async def _body(reader: asyncio.StreamReader, status: int, fields: dict[str, str]) -> bytes:
    """The answer's body, or `_TOO_LARGE` (its rest left unread: the connection is not kept)."""
    if status in _BODILESS:
        return b""
    if "chunked" in fields.get("transfer-encoding", "").lower():
        return await _chunked(reader)
    if "content-length" in fields:
        length = fields["content-length"]
        if not length.isdigit() or len(length) > 18:
            raise Malformed("content-length")
        if int(length) > answer_bytes_max:
            return _TOO_LARGE
        return await reader.readexactly(int(length))
    return await _until_end(reader)


def _whole(fields: dict[str, str]) -> bool:
    """Whether the body's end is marked, so the connection can carry another answer."""
    return "chunked" in fields.get("transfer-encoding", "").lower() or "content-length" in fields


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    """The chunks' bytes, or `_TOO_LARGE` at `answer_bytes_max` (the rest left unread)."""
    content = bytearray()
    while True:
        size_line = (await reader.readuntil(b"\r\n"))[:-2].split(b";", 1)[0].strip()
        if not size_line or len(size_line) > 16 or any(c not in b"0123456789abcdefABCDEF" for c in size_line):
            raise Malformed("chunk size")
        size = int(size_line, 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass  # trailers: none of ours
            return bytes(content)
        if len(content) + size > answer_bytes_max:
            return _TOO_LARGE
        content += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise Malformed("chunk end")


async def _until_end(reader: asyncio.StreamReader) -> bytes:
    content = bytearray()
    while len(content) <= answer_bytes_max and (part := await reader.read(65536)):
        content += part
    return bytes(content[:answer_bytes_max + 1])
