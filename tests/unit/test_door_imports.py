"""A door loads only the libraries of its own extra: `ledger notify` (the web extra's aiohttp)
posts what the log holds, and must not need the kafka extra's aiokafka to do it."""
import subprocess
import sys


def test_ledger_notify_and_ledger_events_load_without_the_kafka_library():
    # given: aiokafka cannot be imported, as when the kafka extra is not installed
    code = "import sys; sys.modules['aiokafka'] = None; import consumers.http.notify, consumers.cli.lookups"
    # when
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    # then
    assert done.returncode == 0, done.stderr
