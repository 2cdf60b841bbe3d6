"""abeq for agents: an MCP server (`abeq mcp`) whose tools check a set, start a run, read its report,
mutate, compare and export, and a skill (`abeq skill install`) that tells an agent how to gate its own
rewrite with them.

- `bounds`: what a tool call may reach (files under the project root, the models and API bases the
  person allowed at start-up, a runner command only with --allow-commands); a tool call never
  confirms a set nor grants the set's code the right to run.
- `tools`: the tools as plain functions over the store, with typed results (`results`); testable
  without the MCP SDK.
- `server`: the tools on the official `mcp` SDK, over stdio or streamable HTTP on loopback.
- `skill`: the skill folder and the agents' MCP configuration.
"""
