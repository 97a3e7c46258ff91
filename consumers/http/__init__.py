"""The HTTP doors: the payment webhook (`ledger webhook`), the owner's browser (`ledger web`), escalation posts.
Entry points: webhook.serve, web.app.serve, notify.Notifier, ops.add_routes (`/healthz`, `/metrics`); site.py."""
