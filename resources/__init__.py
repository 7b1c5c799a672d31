"""MCP resources: read-only URIs over the workspace (``taskloom://…``)."""

from .graphs import register as register_resources
from .runs import register as register_run_resources

__all__ = ["register_resources", "register_run_resources"]
