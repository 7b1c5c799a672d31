"""The one settings object: environment variables ``TASKLOOM_*`` and an optional TOML file."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from .errors import InputError

__all__ = ["Recording", "Settings", "SiteLogin", "load_settings"]

EmbedderName = Literal["minilm", "hashing"]
DEFAULT_WORKSPACE = Path(".taskloom")
Recording = Literal["har", "trace"]


class SiteLogin(BaseModel):
    """How to log in to the site under test: its login page, a user and a password (never shown to agents or written out)."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(None, description="The page with the login form; default: the crawl's or episode's start page.")
    username: str = Field(min_length=1)
    password: SecretStr
    username_field: str | None = Field(None, description="Name, id, label or placeholder of the user field; default: the form's text or e-mail input.")
    password_field: str | None = Field(None, description="Name, id, label or placeholder of the password field; default: the form's password input.")
    submit: str | None = Field(None, description="Text or value of the submit button; default: the form's submit button, else Enter.")

    def revealed(self) -> dict[str, Any]:
        """These fields with the password in clear (for a server process's environment only)."""
        return {k: v.get_secret_value() if isinstance(v, SecretStr) else v for k, v in self if v is not None}


class Settings(BaseSettings):
    """Everything configurable in Taskloom.

    Values come, in order of precedence, from constructor arguments, environment
    variables (``TASKLOOM_WORKSPACE``, ``TASKLOOM_EMBEDDER``, …), a TOML file named by
    ``TASKLOOM_CONFIG`` (or ``./taskloom.toml`` when present), then the defaults below.
    An empty variable counts as unset (``TASKLOOM_WORKSPACE=`` never makes the current
    folder the workspace).
    """

    model_config = SettingsConfigDict(env_prefix="TASKLOOM_", extra="ignore", env_ignore_empty=True)

    workspace: Path = Field(DEFAULT_WORKSPACE, description="Directory holding graphs, chroma, tasks, runs, cache, reports.")
    embedder: EmbedderName = Field(
        "minilm",
        description="'minilm' (all-MiniLM-L6-v2, 384-d, offline ONNX) or 'hashing' (fast, for tests only).",
    )
    embed_batch_size: int = Field(8, ge=1, le=1024, description="Texts per embedding batch.")
    chroma_url: str | None = Field(
        None, description="http(s)://host:port of a Chroma server (`chroma run`) to keep vectors in; unset: the workspace's embedded store."
    )
    search_mode: Literal["hybrid", "vector", "lexical"] = Field(
        "hybrid", description="graph_search / doc_search: BM25 fused with embeddings (hybrid), embeddings only, or BM25 only."
    )
    similarity_threshold: float = Field(0.7, ge=-1.0, le=1.0, description="τ: cosine for semantic_similar edges and document sampling.")
    similarity_top_k: int = Field(5, ge=0, le=100, description="At most this many semantic_similar edges per node.")
    chunk_chars: int = Field(1000, ge=100, le=20000, description="Target size of a chunk node, in characters (1000 fits MiniLM's 256-token window).")
    chunk_overlap: int = Field(150, ge=0, le=5000, description="Characters shared by consecutive chunks.")
    dedup_threshold: float = Field(0.92, ge=0.0, le=1.0, description="Tasks whose instruction+answer embeddings reach this cosine are duplicates.")
    max_pages: int = Field(2000, ge=1, description="Documents with more pages are refused.")
    chromium: str | None = Field(None, description="Chromium binary; default: `chromium-headless-shell` on PATH when installed, else `chromium` (Debian's packages).")
    record_screenshots: bool = Field(False, description="Save a screenshot after every recorded browser or desktop action (opt-in: they cost about one action each).")
    snapshot_mode: Literal["full", "none"] = Field(
        "full",
        description="What a browser action answers with: the page's accessibility snapshot (full) or only URL, title, tabs and dialog "
        "(none, as Playwright MCP's --snapshot-mode none; the agent calls browser_snapshot when it needs the page).",
    )
    record: list[Recording] = Field(
        default_factory=list,
        description="What every browser episode records into its folder besides the trajectory: 'har' (network.har) and/or 'trace' "
        "(trace.zip, screenshots + DOM snapshots, opens with `playwright show-trace`). Opt-in: both cost time and disk.",
    )
    max_episodes: int = Field(16, ge=1, le=256, description="Open browser episodes at once.")
    app_state: tuple[Path, Path] | None = Field(
        None,
        description="An application that keeps state: [pristine folder, live folder it serves]. Before every browser episode the live "
        "folder is made equal to the pristine one (SQLite files by online backup), and one episode holds the application at a time.",
    )
    crawl_delay: float = Field(0.2, ge=0.0, le=30.0, description="Politeness delay between page loads of one crawl, seconds.")
    page_timeout: float = Field(15.0, ge=1.0, le=300.0, description="Per-page load timeout of a crawl, seconds.")
    # Limits of agent and replay episodes: generous by default, so a large page on a busy machine is observed, not failed.
    action_timeout_ms: int = Field(5_000, ge=1, le=600_000, description="How long a browser action waits for its element to be ready, ms.")
    navigation_timeout_ms: int = Field(
        30_000, ge=1, le=600_000, description="How long a navigation (browser_navigate, env_start, a click that loads a page) waits for the page's document, ms."
    )
    snapshot_timeout_ms: int = Field(
        30_000,
        ge=1,
        le=600_000,
        description="How long one accessibility snapshot may take, ms (a 3,000-row table takes about 6 s on 2 busy cores); "
        "a snapshot that takes longer is replaced by a note saying so, the action still counts.",
    )
    snapshot_max_chars: int = Field(
        100_000,
        ge=0,
        description="Snapshots an action answers with are cut at this many characters, with a marker saying how much was cut and how to see "
        "the rest (0: never cut, else at least 200; an agent's own browser_snapshot maxChars wins).",
    )
    inline_snapshots: bool = Field(
        False,
        description="Browser tools show the snapshot after an action inline in their Markdown answer; by default it is saved to the episode's "
        "files/page-<n>.yml and linked, as Playwright MCP does (browser_snapshot always shows it, the structured content always carries it).",
    )
    replay_timeout: float = Field(
        180.0, ge=0.1, le=3600.0, description="Most time one candidate web task's replay (verification at generation) may take, seconds; a slower one is dropped with that reason."
    )
    replay_concurrency: int = Field(
        2,
        ge=1,
        le=8,
        description="Candidate web tasks replayed at once during generation, each in its own browser context (an application with a state "
        "reset replays one at a time: every replay starts from the same state).",
    )
    llm_backend: Literal["none", "openai"] = Field("none", description="'none' (deterministic templates) or 'openai' (any OpenAI-compatible endpoint).")
    llm_base_url: str | None = Field(None, description="Base URL of the OpenAI-compatible endpoint.")
    llm_model: str | None = Field(None, description="Model name at that endpoint.")
    llm_api_key: SecretStr | None = Field(None, description="API key for that endpoint.")
    llm_temperature: float = Field(0.1, ge=0.0, le=2.0)
    llm_max_concurrency: int = Field(4, ge=1, le=64)
    seed: int = Field(0, description="Default seed for anything random.")
    # Security: what tools may touch, who may call over HTTP, how agents under test are fenced.
    allow_roots: list[Path] = Field(
        default_factory=list, description="Directories (besides the workspace) whose files tools may read or write; symlinks are resolved first."
    )
    http_token: SecretStr | None = Field(None, description="Bearer token for the HTTP transport (required off loopback; generated when not given).")
    allowed_hosts: list[str] = Field(default_factory=list, description="Extra Host header names the HTTP transport accepts (loopback names always).")
    allowed_origins: list[str] = Field(default_factory=list, description="Extra Origin values the HTTP transport accepts (loopback origins always).")
    agent_sandbox: Literal["auto", "user", "bwrap", "none"] = Field(
        "auto", description="How command agents are kept from the workspace: auto (bubblewrap when it works, else a throw-away user when root), user, bwrap, or none (unsafe)."
    )
    agent_uids: tuple[int, int] = Field(
        (1_600_000_000, 1_601_000_000),
        description="Range [first, last) of throw-away uids: as root, each command agent runs as a fresh one, for one episode only.",
    )
    agent_paths: list[Path] = Field(
        default_factory=list, description="Paths a bubblewrap-sandboxed agent also sees, read-only (its program, when not under /usr or named on its command line)."
    )
    lock_timeout: float = Field(30.0, ge=0.0, le=3600.0, description="Seconds a workspace writer waits for another writer before 'workspace busy'.")
    fetch_timeout: float = Field(30.0, ge=1.0, le=600.0, description="Overall time limit for fetching one document by URL, seconds.")
    fetch_max_bytes: int = Field(64 * 1024 * 1024, ge=1024, description="Largest document fetched by URL, bytes.")
    site_login: Annotated[SiteLogin | None, NoDecode] = Field(
        None,
        description="Log in before crawling and before every browser episode (TASKLOOM_SITE_LOGIN as JSON or TOML, or a [site_login] table): "
        "url, username, password, optional username_field/password_field/submit. The password never reaches tasks, agents or trajectories.",
    )

    @field_validator("site_login", mode="before")
    @classmethod
    def _login_from_text(cls, value: Any) -> Any:
        """TASKLOOM_SITE_LOGIN arrives as text: a JSON object or TOML keys (``username = "x"``).

        Validated here so that an error names the fields, never their values (the password).
        """
        if value is None or isinstance(value, SiteLogin):
            return value
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return None
            try:
                value = json.loads(text) if text.startswith("{") else tomllib.loads(text)
            except (ValueError, tomllib.TOMLDecodeError):
                raise InputError("site_login is not a JSON object or TOML keys (url, username, password, and optional username_field, password_field, submit)") from None
        try:
            return SiteLogin.model_validate(value)
        except ValidationError as exc:
            wrong = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'site_login'}: {e['msg']}" for e in exc.errors(include_input=False))
            raise InputError(f"site_login is not valid ({wrong})") from None

    @field_validator("workspace", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        """An empty workspace (e.g. ``workspace = ""`` in the config file) means the default, never the current folder."""
        return DEFAULT_WORKSPACE if isinstance(value, str) and not value.strip() else value

    @field_validator("snapshot_max_chars")
    @classmethod
    def _room_for_an_outline(cls, value: int) -> int:
        if 0 < value < 200:
            raise ValueError("snapshot_max_chars is 0 (never cut) or at least 200 (room for the page's outline and the marker)")
        return value

    @field_validator("agent_uids")
    @classmethod
    def _a_range_of_unprivileged_uids(cls, value: tuple[int, int]) -> tuple[int, int]:
        first, last = value
        if not 65536 <= first < last <= 2**32 - 2:
            raise ValueError("agent_uids is [first, last) with 65536 <= first < last <= 4294967294 (no system or ordinary user's uid)")
        return value

    def to_env(self) -> dict[str, str]:
        """These settings as ``TASKLOOM_*`` variables, for a server process started with the same configuration."""
        env: dict[str, str] = {}
        for name, value in self:
            if value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            elif isinstance(value, SiteLogin):
                value = json.dumps(value.revealed())
            elif isinstance(value, Path):
                value = value.resolve()
            elif isinstance(value, (list, tuple)):
                value = json.dumps([str(v.resolve()) if isinstance(v, Path) else str(v) for v in value])
            env[f"TASKLOOM_{name.upper()}"] = str(value).lower() if isinstance(value, bool) else str(value)
        return env

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlSource(settings_cls))


class _TomlSource(PydanticBaseSettingsSource):
    """Reads ``TASKLOOM_CONFIG`` or ``./taskloom.toml`` (top-level keys, or a ``[taskloom]`` table)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        named = os.environ.get("TASKLOOM_CONFIG")
        path = Path(named) if named else Path("taskloom.toml")
        if not path.is_file():
            if named:
                raise InputError(f"TASKLOOM_CONFIG names {path}, which does not exist; fix the path or unset TASKLOOM_CONFIG")
            return {}
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"config file {path} is not valid TOML ({exc}); fix it or unset TASKLOOM_CONFIG") from None
        table = data.get("taskloom", data)
        return {k: v for k, v in table.items() if k in self.settings_cls.model_fields}


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment and config file, with explicit overrides on top."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
