"""What an operator watches: `/healthz` and `/metrics` (Prometheus text) on `ledger serve`
(`--metrics HOST:PORT`), `ledger webhook` and `ledger web`."""
