"""How one document version is applied to one case: the runner modes (chat, tools, agent), the tools
and the agent's command, its workspace and what a run observed."""
