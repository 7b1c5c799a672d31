"""Agent units without a browser: the explorer reads Playwright's AI snapshot format; agent specs parse."""

from __future__ import annotations

from taskloom.harness.agents.base import AgentSpec
from taskloom.harness.agents.explorer import ExplorerAgent, parse_snapshot

SNAPSHOT = """- banner [ref=e2]:
  - link "Harbourside Library" [ref=e3] [cursor=pointer]:
    - /url: index.html
  - search [ref=e4]:
    - searchbox "Search the catalogue" [ref=e5]
    - button "Search" [ref=e6] [cursor=pointer]
  - combobox "Genre" [ref=e7]:
    - option "All genres" [selected]
    - option "Poetry"
  - tab "Summary" [selected] [ref=e8]
- heading "Fog \\"Over\\" Pier" [level=1] [ref=e10]
- link "Next" [ref=f1e9]"""


def test_interactive_elements_and_options_are_parsed() -> None:
    found = [(e.role, e.name, e.ref, e.options) for e in parse_snapshot(SNAPSHOT)]
    assert found == [
        ("link", "Harbourside Library", "e3", []),
        ("searchbox", "Search the catalogue", "e5", []),
        ("button", "Search", "e6", []),
        ("combobox", "Genre", "e7", ["All genres", "Poetry"]),
        ("tab", "Summary", "e8", []),
        ("link", "Next", "f1e9", []),
    ]


def test_candidates_prefer_quoted_values_and_type_unmatched_ones() -> None:
    agent = ExplorerAgent()
    elements = parse_snapshot(SNAPSHOT)
    candidates = agent._candidates(elements, ["Summary", "Ninth", "Poetry"], {"summary", "ninth", "poetry", "search"}, set())
    best = max(candidates, key=lambda c: c[0])
    assert best[0] >= 3.0 and best[1] in ("browser_click", "browser_select_option")
    typed = [c for c in candidates if c[1] == "browser_type"]
    assert [c[2]["text"] for c in typed] == ["Ninth"]  # "Summary" and "Poetry" name elements on the page; only Ninth is typed
    selects = [c for c in candidates if c[1] == "browser_select_option"]
    assert selects and selects[0][2]["values"] == ["Poetry"]


def test_agent_specs_parse_names_and_options() -> None:
    assert AgentSpec.parse("explorer:seed=1,explore=0.4,name=wanderer").model_dump() == {
        "kind": "explorer", "name": "wanderer", "options": {"seed": "1", "explore": "0.4"}
    }
    assert AgentSpec.parse("oracle").name == "oracle"
    assert AgentSpec.parse("explorer:seed=3").name == "explorer-3"


def test_a_command_takes_the_rest_of_the_spec_commas_included() -> None:
    spec = AgentSpec.parse("command:input=stdin,name=mini,cmd={python} agent.py --pick a,b")
    assert spec.name == "mini" and spec.options == {"input": "stdin", "cmd": "{python} agent.py --pick a,b"}
    assert AgentSpec.parse("command:cmd=run.sh").name == "command"
