"""Agent adapters: oracle, replay, explorer (in-process), builtin LLM and external command (over stdio)."""
