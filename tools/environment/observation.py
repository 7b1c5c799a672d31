"""What browser actions take and answer: the observation after an action, and a form field of browser_fill_form."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, Field

from .tabs import TabInfo

__all__ = ["FormField", "Observation"]


class Observation(BaseModel):
    """What the agent sees after an action: where it is and the page's accessibility snapshot."""

    ok: bool = True
    action: str | None = Field(None, description="Canonical form of the action just done.")
    url: str
    title: str
    snapshot: str | None = Field(None, description="Accessibility snapshot; act on elements by their [ref=eN].")
    tabs: list[TabInfo] | None = Field(None, description="The open tabs, when more than one is open (or after browser_tabs).")
    modal: str | None = Field(None, description="A dialog or file chooser waiting for browser_handle_dialog or browser_file_upload.")


class FormField(BaseModel):
    """One field of browser_fill_form, as Playwright MCP shapes it."""

    element: str | None = Field(None, description="Human-readable element description used to obtain permission to interact with the element (optional).")
    name: str = Field(description="Human-readable field name.")
    type: Literal["textbox", "checkbox", "radio", "combobox", "slider"] = Field(description="Type of the field.")
    target: str = Field(
        description="Exact target field reference from the page snapshot, or a unique element selector; 'ref' is accepted too.",
        validation_alias=AliasChoices("target", "ref"),
    )
    value: str = Field(description="Value to fill in. A checkbox or radio takes 'true' or 'false'; a combobox the text of the option.")
