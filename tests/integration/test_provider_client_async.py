"""The providers' HTTP client on an event loop (ledger/providers/http_async.py), as `ledger
serve` asks for its links: the same answers and failures as the threads' client, against the
same counting HTTP/1.1 server, and against a raw one for the wire's other shapes (chunked, no
length, a malformed head, a slow answer)."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from ledger.providers.base import ProviderUnavailable
from ledger.providers.http import Client, Config, answer_bytes_max
from ledger.providers.http_async import AsyncClient
from tests.integration.test_provider_client import SECRET, provider  # noqa: F401 (the fixture)
from tests.kafka_support import wait_until


def aio(url: str, timeout_s: float = 5.0, secret: str = SECRET) -> AsyncClient:
    return AsyncClient(Client("paystack", Config(secret, url, timeout_s)))


def test_calls_one_after_another_keep_one_connection(provider):
    async def calls():
        api = aio(provider.url)
        return [await api.call("POST", "/pay", json={"n": n}) for n in range(5)]
    assert (asyncio.run(calls()), provider.connections) == ([{"status": True}] * 5, 1)


def test_calls_at_once_each_get_an_answer_and_their_connections_are_kept(provider):
    async def calls():
        api = aio(provider.url)
        first = await asyncio.gather(*(api.call("POST", "/pay", form={"n": str(n)}) for n in range(20)))
        again = await asyncio.gather(*(api.call("POST", "/pay", form={"n": str(n)}) for n in range(20)))
        return first + again
    assert asyncio.run(calls()) == [{"status": True}] * 40
    assert provider.connections == 20


def test_a_kept_connection_the_provider_has_closed_is_not_used_again(provider):
    provider.mode = "closes"

    async def calls():
        api, answers = aio(provider.url), []
        for n in range(1, 4):
            answers.append(await api.call("POST", "/pay", json={}))
            await asyncio.to_thread(wait_until, lambda n=n: provider.closed == n, 5, "the provider to close it")
            await asyncio.sleep(0.05)  # the close reaches our end of the connection
        return answers
    assert (asyncio.run(calls()), provider.asked, provider.connections) == ([{"status": True}] * 3, 3, 3)


def test_an_answer_too_long_is_unavailable_and_the_next_call_is_answered(provider):
    provider.mode = "long"

    async def calls():
        api = aio(provider.url)
        with pytest.raises(ProviderUnavailable, match="^paystack POST /pay: 200"):
            await api.call("POST", "/pay", json={})
        provider.mode = "ok"
        return await api.call("POST", "/pay", json={})
    assert asyncio.run(calls()) == {"status": True}
    assert provider.connections == 2  # the first one still held the long answer's rest


def test_a_refusal_is_unavailable_with_the_providers_words_and_no_secret(provider):
    with pytest.raises(ProviderUnavailable) as refused:
        asyncio.run(aio(provider.url).call("POST", "/elsewhere", json={}))
    assert str(refused.value) == "paystack POST /elsewhere: 404 not found"
    assert SECRET not in repr(aio(provider.url))


def test_no_provider_listening_is_unavailable():
    with pytest.raises(ProviderUnavailable, match="^paystack POST /pay: ConnectionRefusedError$"):
        asyncio.run(aio("http://127.0.0.1:9").call("POST", "/pay", json={}))


def test_a_client_used_on_a_later_loop_opens_its_own_connections(provider):
    api = aio(provider.url)
    first = asyncio.run(api.call("POST", "/pay", json={}))
    assert (first, asyncio.run(api.call("POST", "/pay", json={}))) == ({"status": True}, {"status": True})
    assert provider.connections == 2


# --- the wire's other shapes, from a raw server -------------------------------------------

Reply = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def served(reply: Reply, calls: int = 1, timeout_s: float = 5.0) -> tuple[list[object], int]:
    """Each call's answer (or the ProviderUnavailable it raised) and the connections opened."""
    async def run():
        opened = 0

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal opened
            opened += 1
            try:
                while not reader.at_eof():
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length"))
                    await reader.readexactly(length)
                    await reply(reader, writer)
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        api = aio(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", timeout_s)
        answers: list[object] = []
        for _ in range(calls):
            try:
                answers.append(await api.call("POST", "/pay", json={}))
            except ProviderUnavailable as exc:
                answers.append(exc)
        await api.aclose()
        server.close()
        return answers, opened
    return asyncio.run(run())


def answering(*parts: bytes, close: bool = False) -> Reply:
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for part in parts:
            writer.write(part)
            await writer.drain()
        if close:
            writer.close()
    return reply


def test_a_chunked_answer_is_read_whole_and_its_connection_kept():
    reply = answering(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                      b"7;ext=1\r\n{\"statu\r\n", b"9\r\ns\": true}\r\n", b"0\r\nX-Trailer: 1\r\n\r\n")
    assert served(reply, calls=3) == ([{"status": True}] * 3, 1)


def test_an_interim_answer_nobody_asked_for_is_passed_over():
    reply = answering(b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n{\"status\": true}")
    assert served(reply, calls=2) == ([{"status": True}] * 2, 1)


def test_an_answer_without_a_length_is_read_to_the_connections_end():
    reply = answering(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"status\": true}", close=True)
    assert served(reply, calls=2) == ([{"status": True}] * 2, 2)


def test_a_chunked_answer_too_long_is_unavailable_and_its_connection_dropped():
    chunk = b"x" * 4096
    reply = answering(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                      *[b"1000\r\n" + chunk + b"\r\n"] * (answer_bytes_max // 4096 + 2), b"0\r\n\r\n")
    answers, opened = served(reply, calls=2)
    assert [str(a) for a in answers] == ["paystack POST /pay: 200 OK"] * 2 and opened == 2


@pytest.mark.parametrize("head", [
    b"HTTP/1.1 OK\r\n\r\n",
    b"SPDY/3 200 OK\r\nContent-Length: 2\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 20_000 + b"\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\n" * 6,
], ids=["no-code", "not-http", "two-lengths", "negative-length", "no-colon", "bad-chunk", "head-too-long",
        "only-interim"])
def test_an_answer_that_is_not_http_is_unavailable_and_the_next_call_opens_anew(head):
    answers, opened = served(answering(head), calls=2)
    assert all(isinstance(a, ProviderUnavailable) for a in answers) and opened == 2


def test_a_slow_answer_is_unavailable_in_time_and_its_connection_dropped():
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(1.0)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
    answers, opened = served(slow, calls=2, timeout_s=0.2)
    assert [str(a) for a in answers] == ["paystack POST /pay: no answer in time"] * 2 and opened == 2
