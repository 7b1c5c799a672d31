"""The limits of a browser episode: how long an action, a navigation and a snapshot may take, and how long a snapshot may be.

They come from the settings (``action_timeout_ms``, ``navigation_timeout_ms``,
``snapshot_timeout_ms``, ``snapshot_max_chars``, ``replay_timeout``), so a site with
huge pages or a busy machine is served by raising them, not by editing code. A limit
that is reached is told to the agent (a note in the observation, or an action's error
naming the limit), never a crash of the episode.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..settings import Settings

__all__ = ["EpisodeLimits"]


class EpisodeLimits(BaseModel):
    """Time and size limits of one episode's observations and actions (defaults: the settings' defaults)."""

    model_config = ConfigDict(frozen=True)

    action_timeout_ms: int = Field(Settings.model_fields["action_timeout_ms"].default, ge=1, description="An action's wait for its element.")
    navigation_timeout_ms: int = Field(Settings.model_fields["navigation_timeout_ms"].default, ge=1, description="A navigation's wait for the document.")
    snapshot_timeout_ms: int = Field(Settings.model_fields["snapshot_timeout_ms"].default, ge=1, description="One accessibility snapshot.")
    snapshot_max_chars: int = Field(Settings.model_fields["snapshot_max_chars"].default, ge=0, description="Snapshots are cut here (0: never).")
    replay_timeout: float = Field(Settings.model_fields["replay_timeout"].default, gt=0, description="One whole gold replay, seconds.")
    replay_concurrency: int = Field(Settings.model_fields["replay_concurrency"].default, ge=1, description="Gold replays run at once during generation.")

    @classmethod
    def from_settings(cls, settings: Settings) -> EpisodeLimits:
        """The limits ``settings`` set."""
        return cls(**{name: getattr(settings, name) for name in cls.model_fields})

    @property
    def max_chars(self) -> int | None:
        """The default character limit of a snapshot, None when snapshots are never cut."""
        return self.snapshot_max_chars or None

    def snapshot_note(self, why: str, acted: bool) -> str:
        """What an observation shows instead of a snapshot that could not be taken in time (``why``: Playwright's words; ``acted``: after an action)."""
        done = " The action itself was done." if acted else ""
        return (
            f"(no snapshot: the page's accessibility snapshot did not finish within {self.snapshot_timeout_ms / 1000:g} s ({why}); "
            f"the page is very large or busy.{done} Call browser_snapshot with target=<a unique selector "
            "such as 'main' or 'css=table'> to read one part, browser_wait_for, then browser_snapshot again; "
            "the limit is the server's snapshot_timeout_ms setting)"
        )
