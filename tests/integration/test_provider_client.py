"""The providers' HTTP client (ledger/providers/http.py) against a local HTTP/1.1 server that
counts its connections: connections kept alive and shared by the calling threads, never one
the provider closed or one whose answer was not read whole, and every failure one
`ProviderUnavailable`."""
from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ledger.providers.base import PaymentConfigError, ProviderUnavailable
from ledger.providers.http import Client, Config, answer_bytes_max
from tests.kafka_support import wait_until

SECRET = "sk_test_client_0123456789"


class Provider(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Answer)
        self.connections, self.closed, self.asked, self.mode = 0, 0, 0, "ok"
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/api"


class Answer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # kept alive unless told otherwise
    server: Provider

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def finish(self) -> None:
        super().finish()
        with self.server.lock:
            self.server.closed += 1

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        with self.server.lock:
            self.server.asked += 1
        mode = self.server.mode
        if self.path != "/api/pay" or self.headers["Authorization"] != f"Bearer {SECRET}":
            body, status = b'{"message": "not found"}', 404
        elif mode == "long":
            body, status = b'{"pad": "' + b"x" * answer_bytes_max + b'"}', 200
        else:
            body, status = b'{"status": true}', 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        # "closes": the provider drops the connection once it answered, with no word in the headers
        # (as one does a connection idle past its keep-alive time).
        self.close_connection = mode == "closes"

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[Provider]:
    server = Provider()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def client(url: str) -> Client:
    return Client("paystack", Config(SECRET, url, 5.0))


def test_calls_one_after_another_keep_one_connection(provider):
    api = client(provider.url)
    answers = [api.call("POST", "/pay", json={"n": n}) for n in range(5)]
    assert (answers, provider.connections) == ([{"status": True}] * 5, 1)


def test_calls_from_many_threads_at_once_each_get_an_answer_on_at_most_one_connection_a_thread(provider):
    api = client(provider.url)
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda n: api.call("POST", "/pay", form={"n": str(n)}), range(200)))
    assert answers == [{"status": True}] * 200
    assert provider.connections <= 16


def test_a_kept_connection_the_provider_has_closed_is_not_used_again(provider):
    provider.mode = "closes"
    api = client(provider.url)
    answers = []
    for n in range(1, 4):
        answers.append(api.call("POST", "/pay", json={}))
        wait_until(lambda: provider.closed == n, 5, "the provider to close the connection")
    assert (answers, provider.asked, provider.connections) == ([{"status": True}] * 3, 3, 3)


def test_an_answer_too_long_is_unavailable_and_the_next_call_is_answered(provider):
    provider.mode = "long"
    api = client(provider.url)
    with pytest.raises(ProviderUnavailable, match="^paystack POST /pay: 200"):
        api.call("POST", "/pay", json={})
    provider.mode = "ok"
    assert api.call("POST", "/pay", json={}) == {"status": True}
    assert provider.connections == 2  # the first one still held the long answer's rest


def test_a_refusal_is_unavailable_with_the_providers_words_and_no_secret(provider):
    with pytest.raises(ProviderUnavailable) as refused:
        client(provider.url).call("POST", "/elsewhere", json={})
    assert str(refused.value) == "paystack POST /elsewhere: 404 not found"
    assert SECRET not in repr(client(provider.url))


def test_no_provider_listening_is_unavailable():
    with pytest.raises(ProviderUnavailable, match="^paystack POST /pay: ConnectionRefusedError$"):
        client("http://127.0.0.1:9").call("POST", "/pay", json={})


@pytest.mark.parametrize("secret", ["sk_test_abc\n", "sk\r\nX-Injected: 1", "sk\x00", "sk\u2019", "sk\x85"])
def test_a_secret_no_http_header_carries_is_refused_at_start_without_quoting_it(secret):
    with pytest.raises(PaymentConfigError) as refused:
        Client("paystack", Config(secret, "http://127.0.0.1:9", 5.0))
    assert "sk" not in str(refused.value) and "LEDGER_PAYMENT_SECRET" in str(refused.value)


def test_a_call_s_own_header_no_http_header_carries_is_unavailable_before_sending(provider):
    with pytest.raises(ProviderUnavailable, match="^paystack: a request header holds"):
        client(provider.url).call("POST", "/pay", json={}, headers={"Idempotency-Key": "lnk\r\nX: 1"})
    assert provider.asked == 0


@pytest.mark.parametrize("url", ["ftp://api.example.com", "api.example.com", "https://"])
def test_an_api_url_that_is_not_http_or_https_is_a_configuration_error(url):
    with pytest.raises(PaymentConfigError):
        client(url)


def test_https_checks_the_providers_certificate_and_its_name():
    tls = client("https://api.paystack.co").tls
    assert tls is not None and (tls.verify_mode, tls.check_hostname) == (ssl.CERT_REQUIRED, True)
