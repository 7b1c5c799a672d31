"""Write tests/data/trac-tickets.csv: 300 seeded tracker tickets the Trac tests seed their environment with.

Run once; the CSV is committed, so the tests never depend on this script's randomness. Same seed,
same file: ``python tests/data/make-trac-tickets.py`` rewrites it byte for byte.

Columns: id, summary, description, type, component, milestone, priority, owner, reporter,
status, resolution, keywords, comments (``" || "``-separated ``author: text``), created (hours
after 2024-01-01 00:00 UTC). Every summary is unique; the fields vary independently.
"""

from __future__ import annotations

import csv
import random
import sys
from pathlib import Path

SEED = 33
COUNT = 300
COMPONENTS = ["Login", "Search", "Reports", "Billing", "Notifications", "Mobile app", "Public API"]
MILESTONES = ["Release 1.0", "Release 1.1", "Release 2.0", "Someday"]
PRIORITIES = ["blocker", "critical", "major", "minor", "trivial"]
TYPES = ["defect", "enhancement", "task"]
PEOPLE = ["alice", "bruno", "chen", "dalia", "emeka", "freya"]
RESOLUTIONS = ["fixed", "wontfix", "duplicate", "invalid", "worksforme"]
SUBJECTS = [
    "password reset e-mail", "session timeout", "invoice PDF", "search results page", "CSV export", "push notification",
    "monthly report", "user avatar upload", "two-factor prompt", "date picker", "currency rounding", "API rate limit",
    "dark mode toggle", "language menu", "audit log", "webhook retry", "signup form", "order history", "tax summary", "saved filters",
]
PROBLEMS = [
    "fails on {env}", "is slow on {env}", "shows the wrong totals on {env}", "crashes after an update on {env}",
    "loses its state on {env}", "needs a clearer error message on {env}", "should remember the last choice on {env}",
    "is missing a keyboard shortcut on {env}", "renders badly on {env}", "times out on {env}",
]
ENVS = ["Firefox", "Safari", "Android", "iOS", "Windows", "large accounts", "slow networks", "first login"]
KEYWORDS = ["", "", "", "regression", "ux", "performance", "security", "accessibility"]
NOTES = [
    "I can reproduce this every time.", "Still happens on the latest build.", "Workaround: reload the page.",
    "Assigning to the owner of the component.", "Could be related to the cache change.", "Fixed in the branch, needs review.",
]


def rows(seed: int = SEED, count: int = COUNT) -> list[dict[str, str]]:
    """The tickets, numbered from 1."""
    rng = random.Random(seed)
    combos = [(s, p, e) for s in SUBJECTS for p in PROBLEMS for e in ENVS]
    rng.shuffle(combos)
    out: list[dict[str, str]] = []
    for i, (subject, problem, env) in enumerate(combos[:count], start=1):
        summary = f"{subject[0].upper()}{subject[1:]} {problem.format(env=env)}"
        status = rng.choices(["new", "assigned", "accepted", "reopened", "closed"], weights=[5, 3, 2, 1, 4])[0]
        comments = [f"{rng.choice(PEOPLE)}: {rng.choice(NOTES)}" for _ in range(rng.choice([0, 0, 0, 1, 1, 2]))]
        out.append({
            "id": str(i),
            "summary": summary,
            "description": f"The {subject} {problem.format(env=env)}. Seen by {rng.choice(PEOPLE)} while testing {rng.choice(COMPONENTS).lower()}.",
            "type": rng.choice(TYPES),
            "component": rng.choice(COMPONENTS),
            "milestone": rng.choice(MILESTONES),
            "priority": rng.choices(PRIORITIES, weights=[1, 2, 5, 3, 1])[0],
            "owner": rng.choice(PEOPLE),
            "reporter": rng.choice(PEOPLE),
            "status": status,
            "resolution": rng.choice(RESOLUTIONS) if status == "closed" else "",
            "keywords": rng.choice(KEYWORDS),
            "comments": " || ".join(comments),
            "created": str(i * 7),
        })
    return out


def write(path: Path) -> int:
    data = rows()
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(data[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(data)
    return len(data)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "trac-tickets.csv"
    print(f"wrote {write(target)} tickets to {target}")
