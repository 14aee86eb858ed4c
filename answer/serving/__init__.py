"""Serving: the agent tools and their contracts, the HTTP API and MCP server generated from them, workspaces,
organisations, pushed files and each repository's warm state. The top layer of answer/."""
