"""The doors, a room each: cli/ (the composition root), kafka/, http/, mcp/; agent/ is the agent's side.
Shared by several doors, at the top: agent_door.py, projecting.py + follow.py, money.py, ops/."""
