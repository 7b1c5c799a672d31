"""``taskloom build MANIFEST``: the real CLI over a document, the example site (served by the manifest's command) and a broken file.

One uninterrupted build is shared (``built``); the other tests re-run it in place, on a
copy, or build the same manifest again with a ``kill -9`` in the middle.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from taskloom.tools.tasks.harbor_check import URL_KINDS
from taskloom.tools.build.dataset import verify_sums
from taskloom.tools.build.manifest import load_manifest, parse_manifest
from taskloom.tools.build.pipeline import Builder
from taskloom.tools.errors import InputError
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
TASKLOOM = Path(sys.executable).parent / "taskloom"
GUIDE = ROOT / "examples" / "documents" / "field-guide.md"
GOLD_KEYS = {"gold_answer", "gold_steps", "success", "evidence"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PORT = _free_port()
MANIFEST = f"""
[dataset]
name = "mini"
version = "1.0"
seed = 3
embedder = "hashing"

[[source]]
name = "guide"
kind = "document"
path = "docs/guide.md"
count = 4
licence = "Apache-2.0"

[[source]]
name = "broken"
kind = "document"
path = "docs/broken.pdf"
licence = "none"

[[source]]
name = "library"
kind = "site"
start_url = "http://127.0.0.1:{PORT}/index.html"
serve = ["{sys.executable}", "-m", "http.server", "--directory", "{ROOT / 'examples' / 'site'}", "--bind", "127.0.0.1", "{PORT}"]
max_pages = 3
max_depth = 1
count = 2
families = ["web-goals"]
licence = "CC-BY-4.0"
ready_timeout = 120
state = "state/live"
state_seed = "state/seed"

[compose]
mode = "walk"
count = 1
levels = 2
"""


def _project(folder: Path, compose: bool = True) -> Path:
    """A manifest, its document and a broken PDF under ``folder``; the manifest's path."""
    (folder / "docs").mkdir(parents=True)
    shutil.copyfile(GUIDE, folder / "docs" / "guide.md")
    (folder / "docs" / "broken.pdf").write_bytes(b"%PDF-1.7\nthis is no PDF at all\n")
    for part, name in (("seed", "seeded.txt"), ("live", "left-over.txt")):  # a site's state: the build serves a fresh copy of the seed
        (folder / "state" / part).mkdir(parents=True)
        (folder / "state" / part / name).write_text(part, encoding="utf-8")
    (folder / "manifest.toml").write_text(MANIFEST if compose else MANIFEST.split("[compose]")[0], encoding="utf-8")
    return folder / "manifest.toml"


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _command(folder: Path) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(folder / "ws"), FASTMCP_CHECK_FOR_UPDATES="off")
    return [str(TASKLOOM), "build", str(folder / "manifest.toml"), "--out", str(folder / "out")], env


def _build(folder: Path) -> subprocess.CompletedProcess[str]:
    argv, env = _command(folder)
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@dataclass
class Built:
    folder: Path
    run: subprocess.CompletedProcess[str]

    @property
    def result(self) -> dict[str, Any]:
        return dict(json.loads(self.run.stdout))

    @property
    def dataset(self) -> Path:
        return self.folder / "out" / "mini-1.0"

    @property
    def units(self) -> Path:
        return self.folder / "out" / ".taskloom-build" / "mini-1.0" / "units"


def _log(folder: Path) -> list[dict[str, Any]]:
    path = folder / "out" / ".taskloom-build" / "mini-1.0" / "log.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _actions(run: subprocess.CompletedProcess[str]) -> dict[str, str]:
    return {u["name"]: u["action"] for u in json.loads(run.stdout)["units"]}


def _tasks(dataset: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (dataset / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.pop("gold_trajectory", None)  # the replay's trajectory file: a path in the building workspace
    return rows


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    folder = tmp_path_factory.mktemp("build")
    _project(folder)
    return Built(folder, _build(folder))


def test_a_broken_source_is_reported_with_its_reason_and_the_others_are_built(built: Built) -> None:
    assert built.run.returncode == 1, built.run.stderr  # a failed unit: the dataset is written, the exit status says so
    units = {u["name"]: u for u in built.result["units"]}
    assert units["guide"]["action"] == "built" and units["guide"]["tasks"] >= 1
    assert units["library"]["action"] == "built" and units["library"]["tasks"] >= 1
    assert units["library-walk"]["action"] == "built" and units["library-walk"]["tasks"] >= 1
    assert units["broken"]["action"] == "failed"
    assert "broken.pdf" in units["broken"]["reason"] or "PDF" in units["broken"]["reason"], units["broken"]["reason"]
    record = json.loads((built.units / "broken.json").read_text())
    assert record["status"] == "failed" and record["reason"] == units["broken"]["reason"]
    card = (built.dataset / "README.md").read_text()
    assert re.search(r"\| broken \| document \|.*\| 0 \| failed: ", card)
    assert "Units that failed (no tasks in the dataset): broken." in card
    # progress without a terminal: plain lines per stage and source
    assert re.search(r"^ingest guide: guide\.md: done in ", built.run.stderr, re.M), built.run.stderr
    assert re.search(r"^crawl library: done in .*crawled|^crawl library: done in ", built.run.stderr, re.M)
    assert re.search(r"^build library: done, \d+ tasks", built.run.stderr, re.M)
    # the documents were built in a thread of their own beside the site; the units are reported in the manifest's order
    beside = {e["unit"] for e in _log(built.folder) if e.get("beside")}
    assert beside == {"guide", "broken"}
    assert list(units) == ["guide", "broken", "library", "library-walk"]


def test_a_sites_state_is_a_fresh_copy_of_its_seed(built: Built) -> None:
    live = built.folder / "state" / "live"
    assert sorted(p.name for p in live.iterdir()) == ["seeded.txt"], "what an earlier run left in the state folder is gone"
    assert (built.folder / "state" / "seed" / "seeded.txt").read_text(encoding="utf-8") == "seed"


def test_the_dataset_verifies_and_its_card_counts_are_the_tasks_files(built: Built) -> None:
    dataset = built.dataset
    assert verify_sums(dataset) == []
    sums = {name: digest for digest, name in (line.split("  ", 1) for line in (dataset / "SHA256SUMS").read_text().splitlines())}
    on_disk = {str(p.relative_to(dataset)) for p in dataset.rglob("*") if p.is_file() and p.name != "SHA256SUMS"}
    assert set(sums) == on_disk
    assert all(hashlib.sha256((dataset / name).read_bytes()).hexdigest() == digest for name, digest in sums.items())
    tasks = _tasks(dataset)
    table = pq.read_table(dataset / "tasks.parquet").to_pylist()
    assert [r["id"] for r in table] == [t["id"] for t in tasks] and len(tasks) == built.result["tasks"]
    assert {t["kind"] for t in tasks} == {"document", "web", "composite"}
    assert {r["level"] for r in table if r["kind"] == "composite"} >= {1, 2} and {r["family"] for r in table if r["kind"] == "composite"} == {"compose-walk"}
    assert all(json.loads(r["task"])["instruction"] == r["instruction"] for r in table)
    public = [json.loads(line) for line in (dataset / "public.jsonl").read_text().splitlines()]
    assert [p["id"] for p in public] == [t["id"] for t in tasks] and not any(GOLD_KEYS & p.keys() for p in public)
    harbor = sorted(p.name for p in (dataset / "harbor").iterdir())
    judged = [t for t in tasks if all(c["kind"] in URL_KINDS for c in t.get("success") or [])]  # the rest: checks the container cannot make
    assert harbor == sorted(t["id"] for t in judged)
    for t in judged:  # the agent's side of the Harbor export holds no gold
        if t.get("gold_answer"):
            assert t["gold_answer"] not in (dataset / "harbor" / t["id"] / "instruction.md").read_text()
    card = (dataset / "README.md").read_text()

    def table_of(title: str) -> Counter[str]:
        block = card.split(f"### By {title}\n\n", 1)[1].split("\n\n", 1)[0]
        return Counter({row.split(" | ")[0].strip("| "): int(row.split(" | ")[1].strip("| ")) for row in block.splitlines()[2:]})

    assert table_of("kind") == Counter(t["kind"] for t in tasks)
    assert table_of("type") == Counter(t["type"] for t in tasks)
    assert table_of("difficulty") == Counter(t["difficulty"] for t in tasks)
    assert table_of("family") == Counter(r["family"] for r in table)
    assert table_of("level") == Counter("—" if t["level"] is None else str(t["level"]) for t in tasks)
    per_source = Counter(r["source"] for r in table)
    assert re.search(rf"\| guide \| document \| `docs/guide.md` \| Apache-2.0 \| 1 \| {per_source['guide']} \| built \|", card)
    assert re.search(rf"\| library \| site \| .* \| CC-BY-4.0 \| 1 \| {per_source['library']} \| built \|", card)
    assert f"**{len(tasks)} tasks** from 3 of 4 units" in card
    assert re.search(rf"\| library-walk \| compose \| `walk over library` \| CC-BY-4.0 \| 1 \| {per_source['library-walk']} \| built \|", card)
    replay = re.search(r"\*\*(\d+)/(\d+) \(\d+%\)\*\*", card)
    assert replay is not None and int(replay[1]) >= per_source["library"]
    rows = [r.strip("|").split(" | ") for r in card.split("| source | family | graph | candidates |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]]
    replayed = [(int(r[3]), int(r[4]), int(r[5]), int(r[8])) for r in rows if r[5].strip().isdigit()]  # candidates, kept, replayed, not needed
    assert replayed and all(kept <= n and seen + unneeded <= n for n, kept, seen, unneeded in replayed), rows
    for family, n in table_of("family").items():  # samples: min(5, n) per family, verbatim from the tasks
        samples = card.split(f"### {family}\n\n", 1)[1].split("\n### ", 1)[0]
        assert samples.count("```json") == min(5, n)
    first = next(t for t in tasks if t["kind"] == "document")
    assert json.dumps(first["instruction"], ensure_ascii=False) in card


def test_an_unchanged_rerun_redoes_no_unit(built: Built) -> None:
    rerun = _build(built.folder)
    assert _actions(rerun) == {"guide": "skipped", "library": "skipped", "broken": "failed", "library-walk": "skipped"}  # a failed unit is retried
    run_id = _log(built.folder)[-1]["run"]
    events = [(e["unit"], e["event"]) for e in _log(built.folder) if e["run"] == run_id]
    assert ("guide", "skipped") in events and ("library", "skipped") in events
    assert not [u for u, event in events if event in ("started", "done") and u != "broken"]
    assert ("library-walk", "skipped") in events
    assert json.loads(rerun.stdout)["dataset_written"] is False
    assert verify_sums(built.dataset) == []


def test_a_changed_source_redoes_only_its_unit(built: Built, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(built.folder, copy, symlinks=True)
    before = _tasks(copy / "out" / "mini-1.0")
    with open(copy / "docs" / "guide.md", "a", encoding="utf-8") as fh:
        fh.write("\n## Appendix: battery care\n\nThe station's battery lasts 412 days between replacements.\n")
    rerun = _build(copy)
    assert _actions(rerun) == {"guide": "built", "library": "skipped", "broken": "failed", "library-walk": "skipped"}
    after = _tasks(copy / "out" / "mini-1.0")
    assert [t for t in after if t["kind"] == "web"] == [t for t in before if t["kind"] == "web"]
    assert {t["provenance"]["graph_id"] for t in after if t["kind"] == "document"} != {t["provenance"]["graph_id"] for t in before if t["kind"] == "document"}
    assert verify_sums(copy / "out" / "mini-1.0") == []


def test_a_build_killed_after_its_first_unit_continues_and_gives_the_same_tasks(built: Built, tmp_path: Path) -> None:
    _project(tmp_path, compose=False)  # the shared build's sources without its composition (which takes a while)
    argv, env = _command(tmp_path)
    units = tmp_path / "out" / ".taskloom-build" / "mini-1.0" / "units"
    process = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not ((units / "guide.json").is_file() and _answers(PORT)) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the first unit is finished and the second one's site is being served (and crawled)
    assert process.poll() is None, "the build ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert (units / "guide.json").is_file() and not (units / "library.json").is_file()
    deadline = time.monotonic() + 30
    while _answers(PORT) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _answers(PORT), "the site server the killed build started outlived it"
    resumed = _build(tmp_path)
    assert _actions(resumed) == {"guide": "skipped", "library": "built", "broken": "failed"}, resumed.stderr
    done = Counter(e["unit"] for e in _log(tmp_path) if e["event"] == "done")
    assert done == Counter({"guide": 1, "library": 1})
    uninterrupted = [t for t in _tasks(built.dataset) if t["kind"] != "composite"]
    assert _tasks(tmp_path / "out" / "mini-1.0") == uninterrupted and len(uninterrupted) >= 2
    assert verify_sums(tmp_path / "out" / "mini-1.0") == []


# -- the manifest, in process -----------------------------------------------------------------------


def test_bad_manifests_are_refused_naming_the_field(tmp_path: Path) -> None:
    head = '[dataset]\nname = "d"\nversion = "1"\n'
    with pytest.raises(InputError, match=r"source\[0\] \('s'\)\.max_page: Extra inputs"):
        parse_manifest(head + '[[source]]\nname = "s"\nkind = "site"\nstart_url = "http://127.0.0.1:1/"\nmax_page = 3\n', tmp_path)
    with pytest.raises(InputError, match=r"source\[0\] \('s'\): .*needs start_url"):
        parse_manifest(head + '[[source]]\nname = "s"\nkind = "site"\n', tmp_path)
    with pytest.raises(InputError, match=r"dataset\.version: Field required"):
        parse_manifest('[dataset]\nname = "d"\n[[source]]\nname = "s"\nkind = "document"\npath = "x"\n', tmp_path)
    with pytest.raises(InputError, match=r"used twice"):
        parse_manifest(head + '[[source]]\nname = "s"\nkind = "document"\npath = "a"\n[[source]]\nname = "s"\nkind = "document"\npath = "b"\n', tmp_path)
    (tmp_path / "m.toml").write_text(head + '[[source]]\nname = "docs"\nkind = "document"\npath = "nowhere/guide.pdf"\n')
    with pytest.raises(InputError, match=r"source\[0\] \('docs'\)\.path: no file or folder at .*nowhere/guide\.pdf"):
        load_manifest(tmp_path / "m.toml")
    manifest = parse_manifest(head + '[[source]]\nname = "s"\nkind = "site"\nstart_url = "http://127.0.0.1:1/"\ngenerators = ["web-nope"]\n', tmp_path)
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing")
    with pytest.raises(InputError, match=r"generators: unknown 'web-nope'"):
        Builder(manifest, settings, tmp_path, lambda label, total: None, print)  # type: ignore[arg-type, return-value]
    (tmp_path / "ok.toml").write_text(head + '[[source]]\nname = "s"\nkind = "site"\nstart_url = "http://127.0.0.1:1/"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")} | {"TASKLOOM_WORKSPACE": str(tmp_path / "ws")}
    for args, message in ((["--executor", "dask"], "unknown executor 'dask'; choose local or ray"), (["--address", "auto"], "--address and --workers only apply to --executor ray")):
        done = subprocess.run([str(TASKLOOM), "build", str(tmp_path / "ok.toml"), "--out", str(tmp_path / "out"), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not (tmp_path / "out").exists()  # refused before any unit ran


def test_the_example_manifest_is_valid_and_its_paths_exist() -> None:
    manifest = load_manifest(ROOT / "examples" / "build" / "manifest.toml")
    assert {s.kind for s in manifest.sources} == {"document", "site"}
    site = next(s for s in manifest.sources if s.kind == "site")
    assert site.serve is not None and (manifest.base / site.serve[site.serve.index("--directory") + 1] / "index.html").is_file()


def test_the_full_manifest_names_all_the_material_and_its_paths_exist() -> None:
    """examples/build/full.toml (bench/build.py's): every document and every file its serve commands name exists after
    make test-data, or after make bench-data for the files its APT_BENCH list names (the build's own loader refuses a
    missing document, so the manifest is parsed here and each path checked)."""
    path = ROOT / "examples" / "build" / "full.toml"
    manifest = parse_manifest(path.read_text(encoding="utf-8"), path.parent, str(path))
    bench_only = re.search(r"^APT_BENCH := (.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    assert bench_only is not None
    installed_by_bench_data = [pair.split(":")[0] for pair in bench_only.group(1).split()]  # files `make bench-data` installs

    def bench_only_path(p: Path) -> bool:
        return any(f == str(p) or f.startswith(str(p) + "/") or str(p).startswith(str(Path(f).parent) + "/") for f in installed_by_bench_data)

    documents = [s for s in manifest.sources if s.kind == "document"]
    assert not [s.name for s in documents if not manifest.source_path(s).exists() and not bench_only_path(manifest.source_path(s))]
    named = [p.name for s in documents if manifest.source_path(s).exists() for p in manifest.document_files(s)]
    assert {"lmer.pdf", "countreg.pdf", "xtableGallery.pdf", "zoo.pdf", "generalsiminf.pdf", "R-exts.pdf", "field-guide.md"} <= set(named)
    assert {"developers-reference.pdf", "maint-guide.en.pdf", "debian-faq.en.pdf", "tutorial.pdf", "mixtools.pdf", "lmrob_simulation.pdf"} <= set(named)
    sites = [s for s in manifest.sources if s.kind == "site"]
    assert {s.name for s in sites} == {"example-site", "todomvc", "python-docs", "penguins", "trac", "roundup", "pandas-docs", "r-manuals"}
    ports = [s.start_url.split(":")[2].split("/")[0] for s in sites if s.start_url]
    assert len(set(ports)) == len(sites) and all(s.serve and ports[i] in s.serve for i, s in enumerate(sites))
    for site in sites:
        assert site.serve is not None
        named = [manifest.base / arg for arg in site.serve if ("/" in arg or arg.endswith(".py")) and (site.state is None or arg != str(site.state))]  # the build makes state
        missing = [p for p in named if not p.exists() and not bench_only_path(p)]
        assert named and not missing, (site.name, [str(p) for p in missing])
    trackers = {s.name: s for s in sites if s.state is not None}
    assert set(trackers) == {"trac", "roundup"}, "the trackers' replays reset their state"
    assert all(s.state_seed is not None and (manifest.base / s.state_seed).is_dir() and str(s.state) in (s.serve or []) for s in trackers.values())
    cache = ROOT / "tests" / "data" / "cache"
    assert all((cache / f).is_file() for f in ("trac-env/db/trac.db", "trac-venv/bin/tracd", "roundup-env/config.ini", "roundup-venv/bin/roundup-server"))
    assert {u for u, _, _ in manifest.compose_units()} == {"example-site-chain", "example-site-dag", "penguins-chain", "penguins-dag", "todomvc-chain", "todomvc-dag"}
