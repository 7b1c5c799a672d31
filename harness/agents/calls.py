"""Tool calls for scripted agents: a gold step or a recorded action as the agent-profile MCP call that repeats it."""

from __future__ import annotations

from typing import Any

from ...tools.environment.trajectory import ActionRecord
from ...tools.tasks.model import GoldStep

__all__ = ["ToolCall", "call_for_step", "call_for_action", "structured"]

ToolCall = tuple[str, dict[str, Any]]


def call_for_step(step: GoldStep) -> ToolCall:
    """The browser tool call that carries out one gold step (elements by CSS selector)."""
    element = step.canonical or step.action
    target = f"css={step.selector}"
    if step.action == "navigate":
        return "browser_navigate", {"url": step.text or ""}
    if step.action == "click":
        return "browser_click", {"element": element, "target": target}
    if step.action == "type":
        return "browser_type", {"element": element, "target": target, "text": step.text or "", "submit": step.submit}
    if step.action == "select_option":
        return "browser_select_option", {"element": element, "target": target, "values": [step.text or ""]}
    if step.action == "hover":
        return "browser_hover", {"element": element, "target": target}
    if step.action == "press_key":
        return "browser_press_key", {"key": step.text or "Enter"}
    if step.action == "scroll":
        return "browser_scroll", {"direction": "up" if step.text == "up" else "down"}
    return "browser_wait_for", ({"text": step.text} if step.text else {"time": 1.0})


_ELEMENT_TOOLS = {"click", "type", "select_option", "hover", "double_click", "set_checked", "snapshot"}
#: Recorded actions repeated with the arguments recorded (nothing in them is tied to one episode's refs).
_AS_RECORDED = {"navigate", "navigate_back", "press_key", "scroll", "resize", "tabs", "handle_dialog", "file_upload", "console_messages", "network_requests"}


def call_for_action(action: ActionRecord) -> ToolCall | None:
    """The tool call that repeats a recorded action; None for actions that cannot be repeated (a drag: its drop target's selector is not recorded)."""
    args = dict(action.args)
    if "ref" in args:  # recorded before Playwright MCP renamed ref to target
        args["target"] = args.pop("ref")
    if action.name in ("search", "read"):
        return f"doc_{action.name}", args
    if action.name in _ELEMENT_TOOLS:
        if action.target is not None and action.target.selector:
            args["target"] = f"css={action.target.selector}"  # refs are per snapshot; selectors survive a new episode
        if action.name == "double_click":
            return "browser_click", {**args, "doubleClick": True}
        if action.name == "set_checked":  # one checkbox or radio field of browser_fill_form
            field = {"name": args.get("element") or "field", "type": "checkbox", "target": args.get("target", ""), "value": "true" if args.get("checked") else "false"}
            return "browser_fill_form", {"fields": [field]}
        return f"browser_{action.name}", args
    if action.name == "wait_for":  # recorded as the episode's arguments; the tool names them like Playwright MCP
        return "browser_wait_for", {k: v for k, v in {"time": args.get("seconds"), "text": args.get("text"), "textGone": args.get("text_gone")}.items() if v is not None}
    if action.name in _AS_RECORDED:
        return f"browser_{action.name}", args
    return None


def structured(result: Any) -> Any:
    """The structured content of a tool result (lists come wrapped in ``{"result": …}``)."""
    data = result.structured_content or {}
    return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data
