"""The answer engine (get_answer), the agent tools and their front ends (MCP, HTTP)."""
