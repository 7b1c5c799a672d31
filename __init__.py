"""Taskloom: knowledge graphs → agent tasks → graph-based evaluation, behind an MCP server."""

import os

# fastmcp reads its settings when it is first imported, and every fastmcp import in
# Taskloom comes after this package's: no banner on stdout, no update check (no network).
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

__version__ = "0.1.0"
__all__ = ["__version__"]
