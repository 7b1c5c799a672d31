"""A small real run on the served example site: two hand-written web tasks, one the oracle passes and one it cannot.

``failing`` asks for text the About page does not show, so the oracle's episode ends with a failed
``text_present`` criterion (expected beside observed) while its URL criterion holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from taskloom.harness.finish import RunReport
from taskloom.harness.service import Harness
from taskloom.server.app import build_server
from taskloom.tools.settings import Recording, Settings
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Task

MISSING = "Open on Sundays <until> midnight"


def tasks(site: str) -> list[Task]:
    """``passing`` (open the About page) and ``failing`` (the same, but a criterion wants text the page lacks)."""

    def make(task_id: str, instruction: str, generator: str, level: int | None, criteria: list[SuccessCriterion]) -> Task:
        return Task(
            id=task_id, kind="web", type="navigate", instruction=instruction, start_url=site + "index.html", allowed_domains=["127.0.0.1"],
            gold_steps=[GoldStep(action="click", selector="#nav-about", node_id=f"gold-{task_id}")], success=criteria, level=level,
            provenance=Provenance(graph_id="hand-written", generator=generator),
        )

    about = SuccessCriterion(kind="url_matches", value=r"about\.html$")
    return [
        make("passing", "Open the page about the library.", "web-find", None, [about]),
        make("failing", "Open the page that says when the library is open on Sundays <b>late</b>.", "web-lookup", 2,
             [about, SuccessCriterion(kind="text_present", value=MISSING)]),
    ]


def small_run(settings: Settings, site: str, run_id: str, record: Sequence[Recording] = (), agents: Sequence[str] = ("oracle",)) -> RunReport:
    """Run ``agents`` on both tasks (stored into the workspace first) and return the finished run's report."""
    harness = Harness(settings, build_server)
    chosen = tasks(site)
    for task in chosen:
        harness.tasks.save(task)
    return asyncio.run(harness.run(chosen, list(agents), concurrency=2, max_steps=5, timeout_s=60, run_id=run_id, record=list(record)))
