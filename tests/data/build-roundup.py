"""Build a Roundup tracker seeded from tests/data/roundup-issues.csv (default: tests/data/cache/roundup-env). Idempotent.

``roundup-admin install`` with the classic template and the sqlite backend, mail written to a
file instead of sent (``[mail] debug``), then the classic ``schema.py``'s own commented
OPTIONAL block is enabled in the built tracker: anonymous users may create and edit issues,
messages and files (no login in the tests). ``roundup-admin initialise`` with a fixed admin
password; then, through Roundup's own API (``roundup.instance.open(home).open("admin")``), the
CSV's users (with a real name equal to the username, since the CSV export shows a user by
real name and the forms by username), its keywords, and its 200 issues with their messages.

Dates are fixed: Roundup stamps ``creation``/``activity`` and journal entries with the clock
and refuses them as properties, so they are rewritten in SQL afterwards (issues, messages and
their journals; messages carry their own ``date``; users, keywords, priorities and statuses
get the start date), and build-roundup.sh runs this with ``PYTHONHASHSEED=0`` (the word index
is written in set order). What stays random: the admin password's salt, so two builds hold
the same rows but are not equal byte for byte.
The tracker is built in a temporary folder and moved into place in one step. Its ``web``
URL is a placeholder: whoever serves it sets ``[tracker] web`` in its copy's config.ini.

Run with the Python that has ``roundup`` installed: ``bash tests/data/build-roundup.sh`` makes that venv (tests/data/cache/roundup-venv) and runs this.
"""

from __future__ import annotations

import csv
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
CSV = HERE / "roundup-issues.csv"
START = datetime(2024, 3, 1, tzinfo=UTC)
ADMIN_PASSWORD = "taskloom-admin"
_OPTIONAL = """#for cl in 'issue', 'file', 'msg':
#   db.security.addPermissionToRole('Anonymous', 'Create', cl)
#   db.security.addPermissionToRole('Anonymous', 'Edit', cl)"""


def _admin(home: Path, *args: str) -> None:
    admin = Path(sys.executable).with_name("roundup-admin")
    subprocess.run([str(admin), "-i", str(home), *args], check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)


def _stamp(when: datetime) -> str:
    """A date as Roundup's sqlite backend stores it (``YYYYmmddHHMMSS.fff``)."""
    return when.strftime("%Y%m%d%H%M%S.000")


def build(target: Path) -> int:
    """Create and seed the tracker at ``target``; the number of issues."""
    from roundup import date, instance

    with CSV.open(newline="", encoding="utf-8") as handle:
        issues = list(csv.DictReader(handle))
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    _admin(tmp, "install", "classic", "sqlite", f"tracker_name=Taskloom Roundup,tracker_web=http://127.0.0.1:8080/tracker/,mail_domain=example.org,mail_debug={tmp / 'mail.log'}")
    schema = tmp / "schema.py"
    text = schema.read_text()
    assert _OPTIONAL in text, "the classic schema.py no longer has its OPTIONAL anonymous block"
    schema.write_text(text.replace(_OPTIONAL, "\n".join(line.replace("#", "", 1) for line in _OPTIONAL.splitlines())))
    config = tmp / "config.ini"
    config.write_text(config.read_text().replace(f"{tmp / 'mail.log'}", "mail.log"))  # relative to the tracker home wherever it moves
    _admin(tmp, "initialise", ADMIN_PASSWORD)
    dates: dict[str, dict[str, str]] = {"issue": {}, "msg": {}}
    db = instance.open(str(tmp)).open("admin")
    try:
        users = {name: db.user.create(username=name, realname=name, roles="User") for name in sorted({i["assignedto"] for i in issues} | {m.split(": ", 1)[0] for i in issues for m in i["messages"].split(" || ")}) if name}
        keywords = {name: db.keyword.create(name=name) for name in sorted({k for i in issues for k in i["keywords"].split(";") if k})}
        for row in issues:
            when = START + timedelta(hours=int(row["created"]))
            messages = []
            for k, note in enumerate(row["messages"].split(" || ")):
                author, _, text = note.partition(": ")
                at = when + timedelta(minutes=10 * k)
                msg = db.msg.create(content=text, author=users[author], date=date.Date(at.strftime("%Y-%m-%d.%H:%M:%S")), summary=text[:80])
                messages.append(msg)
                dates["msg"][msg] = _stamp(at)
            props = {"title": row["title"], "priority": db.priority.lookup(row["priority"]), "status": db.status.lookup(row["status"]), "messages": messages,
                     "keyword": [keywords[k] for k in row["keywords"].split(";") if k], "nosy": sorted({users[m.split(": ", 1)[0]] for m in row["messages"].split(" || ")})}
            if row["assignedto"]:
                props["assignedto"] = users[row["assignedto"]]
            number = db.issue.create(**props)
            assert number == row["id"], f"issue {row['id']} was created as issue{number}"
            dates["issue"][number] = _stamp(when + timedelta(minutes=10 * (len(messages) - 1)))
        db.commit()
    finally:
        db.close()
    with sqlite3.connect(tmp / "db" / "db") as con:
        for klass, stamps in dates.items():
            con.executemany(f"UPDATE _{klass} SET _creation = ?, _activity = ? WHERE id = ?", [(s, s, int(i)) for i, s in stamps.items()])
            con.executemany(f"UPDATE {klass}__journal SET date = ? WHERE nodeid = ?", [(s, int(i)) for i, s in stamps.items()])
        for klass in ("user", "keyword", "priority", "status"):  # the template's and the seed's fixed items
            con.execute(f"UPDATE {klass}__journal SET date = ?", (_stamp(START),))
            con.execute(f"UPDATE _{klass} SET _creation = ?, _activity = ?", (_stamp(START), _stamp(START)))
    con.close()
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return len(issues)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "cache" / "roundup-env"
    if (out / "db" / "db").is_file():
        sys.exit(0)
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"built {out} with {build(out)} issues")
