"""Desktop-episode start time against its floors, in one run.

Times, ``--runs`` times each and interleaved (so load from other processes hits all alike):

* ``python -c pass``: the venv's Python starting and exiting (a process-start floor);
* ``Xvfb alone``: a private, cookie-protected display started until it accepts connections;
* ``desktop episode``: a :class:`DesktopSession` for mousepad (``--app pcmanfm``: the file manager on the
  organise family's home folder; ``--app gnumeric``: the spreadsheet on one of the sheet family's workbooks): a fresh home seeded with files, Xvfb, a session bus, openbox, the
  application and the accessibility reader, until its window has the focus and its accessibility
  tree has stopped changing (ready for ``desktop_snapshot`` and input);
* ``first snapshot``: the first snapshot after that (the accessibility tree read and formatted);
* ``stop``: stopping the whole session (processes, display, folder).

Prints each median in seconds, the episode's ratio to each floor, and PASS/FAIL for the
issue's target (episode start ≤ 3 s). The last line is ``RESULT {json}``.

    .venv/bin/python bench/desktop_start.py
    .venv/bin/python bench/desktop_start.py --runs 10
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

TARGET = 3.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (default 5)")
    parser.add_argument("--app", choices=("mousepad", "pcmanfm", "gnumeric"), default="mousepad", help="the application (default mousepad)")
    args = parser.parse_args(argv)
    from taskloom.tools.environment.desktop_organise import HOME_FILES
    from taskloom.tools.environment.desktop import VirtualDisplay
    from taskloom.tools.environment.desktop_a11y import format_tree
    from taskloom.tools.environment.desktop_session import APPS, DesktopSession
    from taskloom.tools.environment.desktop_sheet import workbook_xml

    times: dict[str, list[float]] = {k: [] for k in ("python -c pass", "Xvfb alone", "desktop episode", "first snapshot", "stop")}
    lines = 0
    for run in range(args.runs + 1):  # the first round warms the page cache and is not counted
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        python = time.perf_counter() - t
        t = time.perf_counter()
        display = VirtualDisplay(export=False).start()
        xvfb = time.perf_counter() - t
        display.stop()
        t = time.perf_counter()
        files, opened = (HOME_FILES, ["."]) if args.app == "pcmanfm" else ({"notes.txt": "first line\nsecond line\n"}, ["notes.txt"])
        if args.app == "gnumeric":
            files, opened = {"marks.gnumeric": workbook_xml("marks.gnumeric")}, ["marks.gnumeric"]
        session = DesktopSession(APPS[args.app], files=files, open_files=opened).start()
        start = time.perf_counter() - t
        try:
            assert session.tree is not None
            t = time.perf_counter()
            lines = len(format_tree(session.tree.snapshot()[1]))
            snap = time.perf_counter() - t
        finally:
            t = time.perf_counter()
            session.stop()
            stop = time.perf_counter() - t
        if run:
            for key, value in zip(times, (python, xvfb, start, snap, stop)):
                times[key].append(value)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"desktop episode start ({args.app}), {args.runs} runs, {os.cpu_count()} cores, {platform.platform()}")
    for key, value in med.items():
        print(f"  {key:<16} median {value:7.3f} s   (min {min(times[key]):.3f}, max {max(times[key]):.3f})")
    ratios = {f"vs {k}": med["desktop episode"] / med[k] for k in ("python -c pass", "Xvfb alone")}
    for key, value in ratios.items():
        print(f"  episode start {key}: {value:.1f}x")
    ok = med["desktop episode"] <= TARGET
    print(f"  target: episode start <= {TARGET:g} s: {'PASS' if ok else 'FAIL'} ({med['desktop episode']:.3f} s); first snapshot had {lines} lines")
    print("RESULT " + json.dumps({"median_s": med, "ratios": ratios, "target_s": TARGET, "pass": ok, "app": args.app, "runs": args.runs, "cores": os.cpu_count()}))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
