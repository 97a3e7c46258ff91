"""What an operator watches on every door: Prometheus metrics of each outcome and batch, and how far behind the log.
Entry points: http.add_routes (`/healthz`, `/metrics` for `ledger web`/`webhook`), http.start (`serve --metrics`)."""
