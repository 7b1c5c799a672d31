"""Taskloom: knowledge graphs → agent tasks → graph-based evaluation, behind an MCP server."""

__version__ = "0.1.0"
__all__ = ["__version__"]
