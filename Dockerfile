# The ledger as an image: `ledger serve` by default (see docker-compose.yml). Every door's extra is
# installed (`all`: Kafka, PostgreSQL, the HTTP listeners with /metrics, MCP), so any subcommand runs.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY commands ./commands
COPY ledger ./ledger
COPY projections ./projections
COPY consumers ./consumers
RUN pip install --no-cache-dir '.[all]' && useradd --system --uid 10001 ledger

USER ledger
ENTRYPOINT ["ledger"]
CMD ["serve", "--create-topics"]
