"""Log lines of the HTTP doors with no sign-in token in them (CONTRACT 11).

aiohttp's default access line holds the request line as sent, `?token=...` and all, and a
line that could not be parsed can reach its server log the same way. The doors log through
`RedactingAccessLogger`, which writes the query with every `token` value redacted and no
Referer (another site's URL, with whatever it carried); `TokenRedactor` rewrites any
`token=VALUE` left in a record of aiohttp's loggers, spelled with percent-escapes or not.
"""
from __future__ import annotations

import logging
import re
import traceback
from urllib.parse import urlencode

from aiohttp.abc import AbstractAccessLogger
from aiohttp.web_request import BaseRequest
from aiohttp.web_response import StreamResponse

redacted = "[redacted]"
token_param = "token"
# `token=`, any letter or the `=` percent-escaped (`tok%65n=` reads as `token=` to the server).
_TOKEN_VALUE = re.compile(r"(?i)((?:t|%74)(?:o|%6f)(?:k|%6b)(?:e|%65)(?:n|%6e)(?:=|%3d))[^&\s\"'#]*")
aiohttp_loggers = ("aiohttp.access", "aiohttp.server", "aiohttp.web", "aiohttp.internal")


def redact(text: str) -> str:
    return _TOKEN_VALUE.sub(rf"\1{redacted}", text)


def path_and_query(request: BaseRequest) -> str:
    """The request's path and query as the server read them, each token's value redacted."""
    query = [(k, redacted if k.lower() == token_param else v) for k, v in request.query.items()]
    return redact(request.raw_path.partition("?")[0]) + ("?" + urlencode(query, safe="[]") if query else "")


class RedactingAccessLogger(AbstractAccessLogger):
    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        self.logger.info('%s "%s %s HTTP/%d.%d" %d %d %.3fs "%s"', request.remote, request.method,
                         path_and_query(request), *request.version, response.status, response.body_length,
                         time, redact(request.headers.get("User-Agent", "")))


class TokenRedactor(logging.Filter):
    """Rewrites a record's message (and its traceback) with every token value redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # arguments that do not fit the format: logged as given
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), ()
        if record.exc_info:
            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
            record.exc_info = None
        return True


def install() -> None:
    """Filter aiohttp's loggers (once a process)."""
    for name in aiohttp_loggers:
        logger = logging.getLogger(name)
        if not any(isinstance(f, TokenRedactor) for f in logger.filters):
            logger.addFilter(TokenRedactor())
