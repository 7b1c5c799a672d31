"""Build a Trac environment seeded from tests/data/trac-tickets.csv (default: tests/data/cache/trac-env). Idempotent.

``trac-admin <env> initenv`` (SQLite), then the CSV's components, milestones and versions
replace Trac's samples, anonymous users may create, modify and comment on tickets
(``TICKET_CREATE``, ``TICKET_MODIFY``, ``TICKET_APPEND``: no login in the tests) and edit
the wiki (``WIKI_MODIFY``; Trac's guide pages, read-only as installed, are made writable), and the
300 tickets are inserted through Trac's own model (so its tables, change log and search
see them as if people had filed them), with fixed timestamps: the same CSV gives the same
database. The environment is built in a temporary folder and moved into place in one step.

Run with the Python that has ``trac`` installed: ``bash tests/data/build-trac.sh`` makes that venv (tests/data/cache/trac-venv) and runs this.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
CSV = HERE / "trac-tickets.csv"
START = datetime(2024, 1, 1, tzinfo=UTC)


def _admin(env: Path, *args: str) -> None:
    admin = Path(sys.executable).with_name("trac-admin")
    subprocess.run([str(admin), str(env), *args], check=True, stdout=subprocess.DEVNULL)


def build(target: Path) -> int:
    """Create and seed the environment at ``target``; the number of tickets."""
    from trac.env import Environment
    from trac.ticket.model import Ticket

    with CSV.open(newline="", encoding="utf-8") as handle:
        tickets = list(csv.DictReader(handle))
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    _admin(tmp, "initenv", "Taskloom Trac", "sqlite:db/trac.db")
    for name in ("component1", "component2"):
        _admin(tmp, "component", "remove", name)
    for name in ("milestone1", "milestone2", "milestone3", "milestone4"):
        _admin(tmp, "milestone", "remove", name)
    for name in ("1.0", "2.0"):
        _admin(tmp, "version", "remove", name)
    for name in sorted({t["component"] for t in tickets}):
        owner = next(t["owner"] for t in tickets if t["component"] == name)
        _admin(tmp, "component", "add", name, owner)
    for name in sorted({t["milestone"] for t in tickets}):
        _admin(tmp, "milestone", "add", name)
    _admin(tmp, "permission", "add", "anonymous", "TICKET_CREATE", "TICKET_MODIFY", "TICKET_APPEND", "WIKI_MODIFY")
    env = Environment(str(tmp))
    try:
        with env.db_transaction as db:
            db("UPDATE wiki SET readonly = 0")
        for row in tickets:
            when = START + timedelta(hours=int(row["created"]))
            ticket = Ticket(env)
            for name in ("summary", "description", "type", "component", "milestone", "priority", "owner", "reporter", "keywords"):
                ticket[name] = row[name]
            ticket["status"] = "new"
            number = ticket.insert(when=when)
            assert number == int(row["id"]), f"ticket {row['id']} was inserted as #{number}"
            later = when
            for k, note in enumerate(c for c in row["comments"].split(" || ") if c):
                author, _, text = note.partition(": ")
                later = when + timedelta(minutes=10 * (k + 1))
                ticket.save_changes(author, text, when=later)
            if row["status"] != "new":
                ticket["status"] = row["status"]
                ticket["resolution"] = row["resolution"]
                ticket.save_changes(row["owner"], "", when=later + timedelta(minutes=5))
    finally:
        env.shutdown()
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return len(tickets)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "cache" / "trac-env"
    if (out / "db" / "trac.db").is_file():
        sys.exit(0)
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"built {out} with {build(out)} tickets")
