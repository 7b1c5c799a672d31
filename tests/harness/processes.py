"""Finding processes from outside any PID namespace: the command-agent tests' view of what is still running."""

from __future__ import annotations

from pathlib import Path


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is neither a zombie nor dead."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def marked(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(marker.encode() in w for w in words) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found
