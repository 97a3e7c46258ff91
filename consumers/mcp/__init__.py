"""`ledger mcp`: the agent door as a Model Context Protocol server (CONTRACT 13).

tools.py    the tools: the four commands (schemas from commands/tools.py, as `ledger tools`)
            and the lookups find_products and get_order; results as outcome + next step
backends.py where commands go (this process's ledger, or Kafka) and where lookups read
server.py   the MCP server on the official SDK: ids from the token, _meta or the session;
            stdio and streamable HTTP behind a bearer token
"""
