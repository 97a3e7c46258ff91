# The ledger as an image: `ledger serve` by default (see docker-compose.yml). Every door's extra is
# installed (`all`: Kafka, PostgreSQL, the HTTP listeners with /metrics, MCP),
# so any subcommand runs, at the versions uv.lock names (`uv sync --frozen`: the lock as committed,
# never re-resolved; `make lock` refreshes it).
FROM python:3.11-slim

WORKDIR /app
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_NO_CACHE=1 PATH=/app/.venv/bin:$PATH
RUN pip install --no-cache-dir 'uv>=0.13,<0.14' && useradd --system --uid 10001 ledger
# The locked libraries first, in a layer of their own: a change to the ledger's code reuses it.
COPY pyproject.toml uv.lock README.md LICENSE ./
RUN uv sync --frozen --no-default-groups --extra all --no-install-project
COPY commands ./commands
COPY ledger ./ledger
COPY projections ./projections
COPY consumers ./consumers
RUN uv sync --frozen --no-default-groups --extra all --no-editable

USER ledger
ENTRYPOINT ["ledger"]
CMD ["serve", "--create-topics"]
