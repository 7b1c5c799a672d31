"""MCP prompts: how a calling model should use Taskloom's tools for a job."""

from .tasks import register as register_prompts

__all__ = ["register_prompts"]
