"""MCP resources: read-only URIs over the workspace (``taskloom://…``)."""

from .graphs import register as register_resources

__all__ = ["register_resources"]
