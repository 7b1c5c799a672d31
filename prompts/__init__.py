"""MCP prompts: how a calling model should use Taskloom's tools for a job."""

from .evaluate import register as register_evaluation_prompts
from .tasks import register as register_prompts

__all__ = ["register_prompts", "register_evaluation_prompts"]
