"""bench.lone: the same lone commands timed back to back and after a pause, on both backends."""
from __future__ import annotations

import json

from bench import lone


def test_a_lone_command_is_timed_back_to_back_and_after_each_pause(db_url, capsys):
    assert lone.main(["--commands", "3", "--warm-up", "1", "--pause-ms", "1", "--db", db_url]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["commands"] == 3 and printed["pause_ms"] == 1.0
    for way in ("back_to_back", "paced"):
        assert set(printed[way]) == {"p50_ms", "p90_ms", "p99_ms", "cpu_us"}
        assert 0 < printed[way]["p50_ms"] <= printed[way]["p99_ms"]
