"""The build manifest (TOML): what ``taskloom build`` turns into a dataset.

::

    [dataset]
    name = "field-guide-bench"       # the folder is <out>/<name>-<version>/
    version = "0.1.0"
    seed = 0
    embedder = "minilm"              # optional: the settings' embedder when left out

    [[source]]
    name = "field-guide"
    kind = "document"                # a file or a folder of PDF / HTML / Markdown
    path = "../documents/field-guide.pdf"   # relative to the manifest's folder
    count = 10                       # tasks wanted from each family, per document or site
    generators = ["document-templates"]     # optional: the graph kind's default family
    licence = "CC0-1.0"

    [[source]]
    name = "library-site"
    kind = "site"
    start_url = "http://127.0.0.1:8765/index.html"
    serve = ["python3", "-m", "http.server", "-d", "../site", "-b", "127.0.0.1", "8765"]
    max_pages = 12
    max_depth = 2
    count = 5
    licence = "CC0-1.0"

    [[compose]]                      # optional, repeatable; one unit per site: <site>-<mode>
    mode = "walk"                    # walk, pages, chain or dag
    count = 2
    levels = 3

Unknown keys, a missing path, a ``site`` without ``start_url`` and the like are refused
with an :class:`~taskloom.tools.errors.InputError` naming the manifest, the source and the field.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InputError
from ..settings import EmbedderName

__all__ = ["DatasetSection", "Source", "ComposeSection", "Manifest", "load_manifest", "DOCUMENT_SUFFIXES"]

#: Files a ``document`` folder source ingests (others in the folder are left alone).
DOCUMENT_SUFFIXES = (".pdf", ".html", ".htm", ".md", ".markdown")
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class DatasetSection(_Strict):
    """``[dataset]``: the name and version of the published folder, the seed and the embedder."""

    name: str = Field(pattern=_NAME, description="Dataset name: letters, digits, '.', '_', '-'.")
    version: str = Field(pattern=_NAME, description="Dataset version, e.g. 0.1.0.")
    seed: int = Field(0, description="Seed of every generation (a source may set its own).")
    embedder: EmbedderName | None = Field(None, description="minilm or hashing; default: the settings' embedder.")
    description: str = Field("", description="A paragraph for the dataset card.")
    use_llm: bool = Field(False, description="Score and phrase tasks with the configured LLM (off: deterministic templates).")


class Source(_Strict):
    """``[[source]]``: one unit of work: a document (file or folder) or a site."""

    name: str = Field(pattern=_NAME, description="Unique source name (the unit's name in the build folder and the card).")
    kind: Literal["document", "site"]
    path: Path | None = Field(None, description="document: a file or a folder of PDF/HTML/Markdown, relative to the manifest.")
    start_url: str | None = Field(None, pattern=r"^https?://", description="site: where the crawl starts.")
    serve: list[str] | None = Field(None, min_length=1, description="site: a command that serves the site, started before the crawl and stopped after generation.")
    ready_timeout: float = Field(30.0, gt=0, le=600, description="site with serve: seconds to wait for start_url to answer.")
    max_pages: int = Field(30, ge=1, le=5000, description="site: crawl budget, pages.")
    max_depth: int = Field(3, ge=0, le=20, description="site: crawl budget, links followed from the start page.")
    allowed_domains: list[str] | None = Field(None, description="site: allowed domains (default: the start URL's origin).")
    count: int = Field(10, ge=1, le=1000, description="Tasks wanted from each family, per document or site.")
    generators: list[str] = Field(default_factory=list, alias="families", description="Task families (registered generators); default: the graph kind's own.")
    seed: int | None = Field(None, description="Overrides the dataset seed for this source.")
    licence: str = Field("unspecified", min_length=1, description="Licence of the source material, shown on the card.")
    state: Path | None = Field(
        None,
        description="site: the folder its server keeps its state in (relative to the manifest); a fresh copy of state_seed before "
        "the unit and before every replay, so a replay that files or edits records does not change what the next one sees.",
    )
    state_seed: Path | None = Field(None, description="site with state: the pristine state it is copied from (relative to the manifest).")

    @model_validator(mode="after")
    def _fields_of_its_kind(self) -> Source:
        if self.kind == "document":
            if self.path is None:
                raise ValueError("a document source needs path (a file or folder)")
            extra = [f for f in ("start_url", "serve", "state", "state_seed") if getattr(self, f) is not None]
        else:
            if self.start_url is None:
                raise ValueError("a site source needs start_url")
            if (self.state is None) != (self.state_seed is None):
                raise ValueError("state and state_seed go together: the folder the server keeps its state in, and the pristine copy")
            extra = ["path"] if self.path is not None else []
        if extra:
            raise ValueError(f"{', '.join(extra)} does not apply to a {self.kind} source")
        return self


class ComposeSection(_Strict):
    """``[[compose]]``: composite tasks over site sources' verified tasks, one unit per site.

    ``chain`` and ``dag``: values flow between subtasks (sites with typed listings);
    ``walk`` and ``pages``: click-path chains and page graphs (any site).
    """

    mode: Literal["chain", "dag", "walk", "pages"] = "walk"
    count: int = Field(3, ge=1, le=100, description="chain, walk: chains; dag, pages: task graphs.")
    levels: int = Field(6, ge=1, le=6, description="chain, walk: the longest chain, in subtasks.")
    sources: list[str] = Field(default_factory=list, description="Site sources to compose over; default: every site.")


class Manifest(_Strict):
    """A whole manifest; ``base`` is the folder relative paths are read from (the manifest's own)."""

    dataset: DatasetSection
    sources: list[Source] = Field(alias="source", min_length=1)
    compose: list[ComposeSection] = Field(default_factory=list, description="[compose] or [[compose]] entries.")
    base: Path = Field(Path("."), exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _one_compose_table(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("compose"), dict):
            return {**data, "compose": [data["compose"]]}
        return data

    @model_validator(mode="after")
    def _unique_names(self) -> Manifest:
        seen: set[str] = set()
        for source in self.sources:
            if source.name in seen:
                raise ValueError(f"source name {source.name!r} is used twice; names must be unique")
            seen.add(source.name)
        sites = {s.name for s in self.sources if s.kind == "site"}
        for entry in self.compose:
            unknown = [name for name in entry.sources if name not in sites]
            if unknown:
                raise ValueError(f"compose.sources: {', '.join(map(repr, unknown))} is no site source of this manifest")
        for name, _, _ in self.compose_units():
            if name in seen:
                raise ValueError(f"compose unit {name!r} is named twice (a source of that name, or two entries of one mode)")
            seen.add(name)
        return self

    def compose_units(self) -> list[tuple[str, Source, ComposeSection]]:
        """``(unit name, site source, entry)`` for each compose entry and site: ``<site>-<mode>``."""
        units = []
        for entry in self.compose:
            for source in self.sources:
                if source.kind == "site" and (not entry.sources or source.name in entry.sources):
                    units.append((f"{source.name}-{entry.mode}", source, entry))
        return units

    @property
    def folder_name(self) -> str:
        """``<name>-<version>``: the dataset folder's name."""
        return f"{self.dataset.name}-{self.dataset.version}"

    def source_path(self, source: Source) -> Path:
        """A document source's path, resolved against the manifest's folder."""
        assert source.path is not None
        return (self.base / source.path).resolve()

    def document_files(self, source: Source) -> list[Path]:
        """The files a document source ingests: the file itself, or the folder's PDF/HTML/Markdown files (sorted, recursive)."""
        path = self.source_path(source)
        if path.is_file():
            return [path]
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES)


def _where(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    """``source[2] ('docs').path`` for a pydantic location ``('source', 2, 'path')``."""
    parts: list[str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int) and i > 0 and loc[i - 1] == "source":
            entries = data.get("source")
            name = entries[part].get("name") if isinstance(entries, list) and part < len(entries) and isinstance(entries[part], dict) else None
            parts[-1] += f"[{part}]" + (f" ({name!r})" if name else "")
        else:
            parts.append(str(part))
    return ".".join(parts) or "manifest"


def parse_manifest(text: str, base: Path, label: str = "manifest") -> Manifest:
    """Parse and validate manifest TOML; relative paths are read from ``base``.

    >>> m = parse_manifest('[dataset]\\nname="d"\\nversion="1"\\n[[source]]\\nname="s"\\nkind="site"\\nstart_url="http://127.0.0.1:1/"', Path("."))
    >>> m.folder_name, m.sources[0].count
    ('d-1', 10)
    >>> parse_manifest('[dataset]\\nname="d"\\nversion="1"\\n[[source]]\\nname="s"\\nkind="site"\\nstart_url="http://x/"\\nmax_page=3', Path("."))
    Traceback (most recent call last):
    ...
    taskloom.tools.errors.InputError: manifest: source[0] ('s').max_page: Extra inputs are not permitted
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{label} is not valid TOML: {exc}") from None
    try:
        return Manifest.model_validate({**data, "base": base})
    except ValidationError as exc:
        problems = "; ".join(f"{_where(e['loc'], data)}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
        raise InputError(f"{label}: {problems}") from None


def load_manifest(path: Path) -> Manifest:
    """Read, validate and check a manifest file: every document path must exist and hold documents."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no manifest at {path}")
    manifest = parse_manifest(path.read_text(encoding="utf-8"), path.resolve().parent, f"manifest {path}")
    for i, source in enumerate(manifest.sources):
        if source.kind != "document":
            continue
        where = f"manifest {path}: source[{i}] ({source.name!r}).path"
        resolved = manifest.source_path(source)
        if not resolved.exists():
            raise InputError(f"{where}: no file or folder at {resolved}")
        if not manifest.document_files(source):
            raise InputError(f"{where}: the folder {resolved} holds no {'/'.join(DOCUMENT_SUFFIXES)} file")
    return manifest
