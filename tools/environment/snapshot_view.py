"""Size control for accessibility snapshots: a character limit with a marker saying what was cut and how to see it."""

from __future__ import annotations

from dataclasses import dataclass

from playwright.async_api import Locator

__all__ = ["MIN_CHARS", "View", "truncate"]

#: The smallest limit accepted: enough for a page's outline and the marker.
MIN_CHARS = 200


@dataclass(frozen=True)
class View:
    """How much of the page a snapshot shows: one element's subtree (``scope``), a ``depth``, boxes, a character limit."""

    scope: Locator | None = None
    depth: int | None = None
    boxes: bool = False
    max_chars: int | None = None

    @property
    def partial(self) -> bool:
        """Whether the snapshot is not the plain whole page (the page's refs must then be renewed after it)."""
        return self.scope is not None or self.depth is not None or self.boxes


def truncate(snapshot: str, max_chars: int | None, asked: bool = True) -> str:
    """``snapshot`` cut to at most ``max_chars`` characters at a line end, followed by a marker line.

    The marker names the limit and the full size, and how to see the rest: a snapshot
    scoped to one element (``target``) or a shallower one (``depth``). A cut the agent did
    not ask for (``asked`` False: the server's ``snapshot_max_chars``) also says how many
    characters were left out and that ``maxChars`` shows them.

    >>> print(truncate("- a [ref=e1]\\n- b [ref=e2]\\n", 13))
    - a [ref=e1]
    [… snapshot truncated at 13 of 26 characters; call browser_snapshot with target=<a ref shown above> to see one part, or with depth=N for an outline]
    >>> print(truncate("- a [ref=e1]\\n- b [ref=e2]\\n", 13, asked=False))
    - a [ref=e1]
    [… snapshot truncated at 13 of 26 characters (14 left out); call browser_snapshot with target=<a ref shown above> to see one part, with depth=N for an outline, or with maxChars=26 for the whole page]
    >>> truncate("- a", None)
    '- a'
    """
    if max_chars is None or len(snapshot) <= max_chars:
        return snapshot
    cut = snapshot.rfind("\n", 0, max_chars + 1)
    kept = snapshot[: cut if cut > 0 else max_chars].rstrip("\n")
    if asked:
        how = "to see one part, or with depth=N for an outline"
        return f"{kept}\n[… snapshot truncated at {max_chars} of {len(snapshot)} characters; call browser_snapshot with target=<a ref shown above> {how}]"
    return (
        f"{kept}\n[… snapshot truncated at {max_chars} of {len(snapshot)} characters ({len(snapshot) - len(kept)} left out); call browser_snapshot with "
        f"target=<a ref shown above> to see one part, with depth=N for an outline, or with maxChars={len(snapshot)} for the whole page]"
    )
