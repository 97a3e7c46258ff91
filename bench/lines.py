"""A huge line between two good ones: `ledger process` must answer it in about the time it
takes to read it (CONTRACT 11, size), and never hold it whole.

    python -m bench.lines --mb 20 [--mb 100] [--kind garbage|reason]

garbage: a line of `x`s with no JSON in it; reason: an Escalate whose reason is the whole
line. Each run: a fresh SQLite file, one `ledger process FILE` timed from start to exit
(start-up included), its CPU time and peak RSS; and the same for the two good lines alone,
the yardstick. Prints one JSON line a size.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LEDGER = str(Path(sys.executable).with_name("ledger"))


def _escalate(command_id: str, reason: str = "help") -> str:
    return json.dumps({"command_id": command_id, "type": "Escalate", "business_id": "shop-1", "agent_id": "bot",
                       "conversation_id": "conv-1", "turn_id": f"t-{command_id}",
                       "facts": {"reason": {"status": "known", "value": reason, "source": "message"}}})


def _timed(path: Path, folder: Path) -> dict:
    db = f"sqlite:///{folder}/{path.stem}.db"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([LEDGER, "process", str(path), "--db", db], capture_output=True, check=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    statuses = [json.loads(line)["status"] for line in done.stdout.splitlines()]
    return {"seconds": round(seconds, 2), "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
            "max_rss_mb": after.ru_maxrss // 1024, "outcomes": statuses}


def _write(path: Path, mb: int, kind: str) -> None:
    """Written a megabyte at a time: a child forked from a parent holding the line whole
    would count it in its peak RSS."""
    head, tail = ('', '') if kind == "garbage" else _escalate("huge", "\0").split("\\u0000")
    with open(path, "w") as f:
        f.write(_escalate("before") + "\n" + head)
        for _ in range(mb):
            f.write(("x" if kind == "garbage" else "r") * 1_000_000)
        f.write(tail + "\n" + _escalate("after") + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=int, action="append", help="size of the huge line in MB (1,000,000 bytes)")
    p.add_argument("--kind", choices=("garbage", "reason"), default="garbage")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        yardstick = folder / "two.jsonl"
        yardstick.write_text(_escalate("before") + "\n" + _escalate("after") + "\n")
        base = _timed(yardstick, folder)
        for mb in args.mb or [20]:
            path = folder / f"huge{mb}.jsonl"
            _write(path, mb, args.kind)
            run = _timed(path, folder)
            print(json.dumps({"line_mb": mb, "kind": args.kind, **run, "two_good_lines_alone": base}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
