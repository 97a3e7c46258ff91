"""The fake provider (tests/fake_provider.py) in a process of its own, as a real provider is
remote: in the bench's process it would share the measuring client's GIL and slow the reading
of the very outcomes it is timed by. `calls()` asks it how many requests it has answered."""
from __future__ import annotations

import subprocess
import sys

_SCRIPT = """
import sys
from tests.fake_provider import FakeProvider
fake = FakeProvider(delay_s=float(sys.argv[1]))
print(fake.start(), flush=True)
for line in sys.stdin:
    print(sum(fake.requests.values()), flush=True)
"""


class RemoteFake:
    def __init__(self, delay_s: float):
        self._proc = subprocess.Popen([sys.executable, "-c", _SCRIPT, str(delay_s)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None and self._proc.stdin is not None
        self.url = self._proc.stdout.readline().strip()

    def calls(self) -> int:
        assert self._proc.stdout is not None and self._proc.stdin is not None
        self._proc.stdin.write("calls\n")
        self._proc.stdin.flush()
        return int(self._proc.stdout.readline())

    def stop(self) -> None:
        self._proc.kill()
        self._proc.wait()
