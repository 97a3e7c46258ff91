"""What an operator watches on every door: Prometheus metrics of each outcome and batch, and how far behind the log.
Entry point: metrics.Metrics (a site's registry); consumers/http/ops.py serves it with `/healthz`."""
