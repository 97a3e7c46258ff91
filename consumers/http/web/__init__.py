"""`ledger web`: the people's side in a browser (app.py routes, auth.py tokens, pages.py data, templates.py HTML)."""
