"""/metrics on the HTTP doors reads the log without the Kafka door's library: `ledger web` and
`ledger webhook` come with the web extra alone."""
import subprocess
import sys


def test_metrics_render_the_log_position_when_aiokafka_cannot_be_imported(store, db_url):
    # given: a ledger's database, and a process where aiokafka cannot be imported
    code = ("import sys; sys.modules['aiokafka'] = None\n"
            "from consumers.ops.metrics import Metrics\nfrom ledger.store.database import Store\n"
            f"sys.stdout.write(Metrics(Store({db_url!r})).render().decode())")
    # when
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    # then
    assert done.returncode == 0, done.stderr
    assert "ledger_log_position 0.0" in done.stdout.splitlines()
    assert "ledger_outbox_depth" not in done.stdout
