"""Where logs go and how they look: `LEDGER_LOG_LEVEL` and `--log-format` / `LEDGER_LOG_FORMAT`.

Logs go to stderr (stdout is for JSON Lines). The level is a name, any case, or a number;
the names people type for "more" and "less" (`verbose`, `trace`, `warn`, `quiet`...) mean
what they would expect. An unknown level is a usage error, not a crash at start-up.
`json` prints one object a line (`time`, `level`, `logger`, `message`, and `error` with the
exception's first line) for log shippers.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import time
import unicodedata
from typing import Any

from consumers.cli.table import HIDDEN, printable

level_env = "LEDGER_LOG_LEVEL"
format_env = "LEDGER_LOG_FORMAT"
FORMATS = ("text", "json")
LEVELS = {
    "debug": logging.DEBUG, "verbose": logging.DEBUG, "trace": logging.DEBUG, "all": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING, "warn": logging.WARNING,
    "error": logging.ERROR, "err": logging.ERROR,
    "critical": logging.CRITICAL, "fatal": logging.CRITICAL,
    "quiet": logging.CRITICAL + 1, "silent": logging.CRITICAL + 1, "off": logging.CRITICAL + 1,
    "none": logging.CRITICAL + 1,
}


class LogConfigError(ValueError):
    """A log setting the operator must change: a usage error."""


def parse_level(value: str | None) -> int | None:
    """The level `value` names; None when it is unset or blank (each command keeps its default)."""
    if value is None or not value.strip():
        return None
    name = value.strip().lower()
    if name.isdigit():
        return int(name)
    if name not in LEVELS:
        raise LogConfigError(f"{level_env}={value!r} is not a log level (one of {', '.join(LEVELS)}, or a number)")
    return LEVELS[name]


def parse_format(value: str | None) -> str:
    name = (value or "text").strip().lower() or "text"
    if name not in FORMATS:
        raise LogConfigError(f"log format {value!r} is not one of {', '.join(FORMATS)}")
    return name


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        row = {"time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
               "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage()}
        if record.exc_info and record.exc_info[1] is not None:
            row["error"] = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}".splitlines()[0]
        return _json_escaped(json.dumps(row, ensure_ascii=False))


class TextFormatter(logging.Formatter):
    """A log line as people read it; what it quotes of the log (a reason, a fact's source, an
    excerpt) is anyone's text, so nothing in it reaches the terminal as a control: each
    such character is spelled as its escape, and a message stays on its line."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        return "\n".join(printable(line) for line in super().formatException(ei).split("\n"))

    def formatStack(self, stack_info: str) -> str:
        return "\n".join(printable(line) for line in super().formatStack(stack_info).split("\n"))


def _json_escaped(line: str) -> str:
    """JSON as `json.dumps(ensure_ascii=False)` writes it, with the characters a terminal may act
    on or that show as nothing (C1 controls such as CSI, bidi and zero-width ones) written as
    JSON escapes too: the same value for a reader, inert on a terminal."""
    if line.isprintable():
        return line
    return "".join(_json_escape(ch) if unicodedata.category(ch) in HIDDEN else ch for ch in line)


def _json_escape(ch: str) -> str:
    n = ord(ch)
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def configure(log_format: str | None) -> int | None:
    """Set up the root logger from the environment and the option; returns the chosen level
    (None: unset, the command picks). Raises LogConfigError for a bad level or format."""
    level = parse_level(os.environ.get(level_env))
    chosen = parse_format(log_format if log_format is not None else os.environ.get(format_env))
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if chosen == "json"
                         else TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING if level is None else level)
    return level
