"""The contract: facts (facts.py), the command models (models.py), reading raw input into one
(parsing.py), the limits (limits.py), an agent's world state (world.py) and its tool schemas
(tools.py). Depends on pydantic only. Import each from its module: importing a light one
(`commands.limits`, as every `ledger` run does) builds no pydantic model."""
