"""Environments agents act in: browser episodes, the desktop on Xvfb, application state turns and the MCP tools over them."""
