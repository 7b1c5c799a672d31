"""Filtering: reachability, LLM quality score, de-duplication, coverage (MMR)."""
