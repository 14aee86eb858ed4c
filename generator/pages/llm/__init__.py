"""The LLM page writer: prompts, validated drafts, the small-model policy, cost and ledger."""
