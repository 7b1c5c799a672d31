"""Write tests/data/roundup-issues.csv: 200 seeded issues the Roundup tests seed their tracker with.

Run once; the CSV is committed, so the tests never depend on this script's randomness. Same seed,
same file: ``python tests/data/make-roundup-issues.py`` rewrites it byte for byte.

Columns: id, title, priority and status (names from Roundup's classic template), assignedto (a
username or empty), keywords (``;``-separated, possibly empty), messages (``" || "``-separated
``author: text``; the first is the report itself), created (hours after 2024-03-01 00:00 UTC).
Every title is unique and none is a Trac ticket's summary (tests/data/trac-tickets.csv).
"""

from __future__ import annotations

import csv
import random
import sys
from pathlib import Path

SEED = 34
COUNT = 200
PRIORITIES = ["critical", "urgent", "bug", "feature", "wish"]
STATUSES = ["unread", "deferred", "chatting", "need-eg", "in-progress", "testing", "done-cbb", "resolved"]
USERS = ["agnes", "boris", "carmen", "dmitri", "eliska"]
KEYWORDS = ["catalogue", "lending", "reservations", "translations", "printing", "kiosk"]
THINGS = [
    "book reservation queue", "late fee calculator", "barcode scanner", "reading list", "branch opening hours",
    "interlibrary loan request", "e-book download", "member card renewal", "shelf map", "catalogue record editor",
    "reminder letter", "donation receipt", "room booking calendar", "audio book player", "new acquisitions feed",
    "patron self-checkout", "holds pickup slip", "staff rota",
]
TROUBLES = [
    "counts weekends twice {ctx}", "ignores the branch filter {ctx}", "prints a blank page {ctx}", "hangs {ctx}",
    "shows yesterday's data {ctx}", "cannot be undone {ctx}", "needs a bigger font {ctx}", "mixes up two patrons {ctx}",
    "rounds fees the wrong way {ctx}", "should offer a Welsh translation {ctx}",
]
CONTEXTS = ["at the main branch", "on the kiosk", "for child members", "after midnight", "in the mobile view", "with a long surname"]
NOTES = [
    "Confirmed on the test tracker.", "Happens to every patron I tried.", "A restart of the kiosk clears it for a while.",
    "Probably the same cause as the printer problem.", "Patch attached to the branch, please review.", "Staff asked for this twice this week.",
]


def rows(seed: int = SEED, count: int = COUNT) -> list[dict[str, str]]:
    """The issues, numbered from 1."""
    rng = random.Random(seed)
    combos = [(t, p, c) for t in THINGS for p in TROUBLES for c in CONTEXTS]
    rng.shuffle(combos)
    out: list[dict[str, str]] = []
    for i, (thing, trouble, ctx) in enumerate(combos[:count], start=1):
        title = f"{thing[0].upper()}{thing[1:]} {trouble.format(ctx=ctx)}"
        reporter = rng.choice(USERS)
        messages = [f"{reporter}: The {thing} {trouble.format(ctx=ctx)}."]
        messages += [f"{rng.choice(USERS)}: {rng.choice(NOTES)}" for _ in range(rng.choice([0, 0, 1, 1, 2]))]
        keywords = sorted(set(rng.sample(KEYWORDS, rng.choice([0, 1, 1, 2]))))
        out.append({
            "id": str(i),
            "title": title,
            "priority": rng.choices(PRIORITIES, weights=[1, 2, 5, 3, 2])[0],
            "status": rng.choices(STATUSES, weights=[4, 1, 2, 1, 3, 2, 1, 4])[0],
            "assignedto": rng.choice(["", *USERS]),
            "keywords": ";".join(keywords),
            "messages": " || ".join(messages),
            "created": str(i * 5),
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
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "roundup-issues.csv"
    print(f"wrote {write(target)} issues to {target}")
