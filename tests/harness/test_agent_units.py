"""Agent units without a browser: the explorer reads Playwright's AI snapshot format and answers from it; the
word-matching baseline picks controls by shared words; agent specs parse."""

from __future__ import annotations

from taskloom.harness.agents.base import AgentSpec
from taskloom.harness.agents.explorer import ExplorerAgent, find_answer, goal_mode, page_records, parse_snapshot, read_goal
from taskloom.harness.agents.wordmatch import pick_control

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


# Captured from sqlite-web over penguins-raw (Chromium's aria_snapshot(mode="ai")): a listing page, cut to two rows.
LISTING = """- generic [active] [ref=f1e1]:
  - generic [ref=f1e31]:
    - table [ref=f1e33]:
      - rowgroup [ref=f1e34]:
        - row [ref=f1e35]:
          - columnheader "Individual ID" [ref=f1e50]:
            - link "Individual ID" [ref=f1e51] [cursor=pointer]:
              - /url: /penguins/content/?ordering=8
          - columnheader "studyName" [ref=f1e38]:
            - link "studyName" [ref=f1e39] [cursor=pointer]:
              - /url: /penguins/content/?ordering=2
          - columnheader "Species" [ref=f1e42]
          - columnheader "Body Mass (g)" [ref=f1e62]:
            - link "Body Mass (g)" [ref=f1e63] [cursor=pointer]:
              - /url: /penguins/content/?ordering=14
          - columnheader "Comments" [ref=f1e70]
          - columnheader [ref=f1e72]
      - rowgroup [ref=f1e73]:
        - row [ref=f1e74]:
          - cell "N12A1" [ref=f1e82]
          - cell "PAL0708" [ref=f1e76]
          - cell "Gentoo penguin (Pygoscelis papua)" [ref=f1e78]
          - cell "4400" [ref=f1e88]
          - cell [ref=f1e90]:
            - code [ref=f1e91]: "NULL"
          - cell [ref=f1e95]:
            - link "Copy row as JSON" [ref=f1e96] [cursor=pointer]:
              - /url: "#"
            - link "View" [ref=f1e99] [cursor=pointer]:
              - /url: /penguins/row/WzFd/
        - row "N12A1 PAL0809 Gentoo penguin (Pygoscelis papua) 5100" [ref=f1e102]:
          - cell "N12A1" [ref=f1e110]
          - cell "PAL0809" [ref=f1e104]
          - cell "Gentoo penguin (Pygoscelis papua)" [ref=f1e106]
          - cell "5100" [ref=f1e116]
          - cell "Not enough blood for isotopes." [ref=f1e120]
          - cell [ref=f1e122]:
            - link "Copy row as JSON" [ref=f1e123] [cursor=pointer]:
              - /url: "#"
            - link "View" [ref=f1e126] [cursor=pointer]:
              - /url: /penguins/row/WzJd/
    - navigation [ref=f1e1440]:
      - list [ref=f1e1441]:
        - listitem [ref=f1e1444]:
          - generic: Page 1 / 7
        - listitem [ref=f1e1445]:
          - link "›" [ref=f1e1446] [cursor=pointer]:
            - /url: /penguins/content/?page=2"""

# The same site's record page (a key-value table of row headers), and a definition list as Chromium shows <dl>.
DETAIL = """- generic [ref=e31]:
  - heading "Row 2 from penguins" [level=3] [ref=e32]
  - table [ref=e33]:
    - rowgroup [ref=e34]:
      - row [ref=e56]:
        - rowheader "Individual ID" [ref=e57]
        - cell "N12A1" [ref=e58]
      - row [ref=e38]:
        - rowheader "studyName" [ref=e39]
        - cell "PAL0809" [ref=e40]
      - row [ref=e65]:
        - rowheader "Flipper Length (mm)" [ref=e66]
        - cell "221" [ref=e67]
      - row [ref=e74]:
        - rowheader "Body Mass (g)" [ref=e75]
        - cell "5100" [ref=e76]
  - link "Back" [ref=e91] [cursor=pointer]:
    - /url: /penguins/content/"""

TERMS = '''- main [ref=e6]:
  - heading "Record N12A1" [level=1] [ref=e7]
  - generic [ref=e8]:
    - term [ref=e9]: Individual ID
    - definition [ref=e10]: N12A1
    - term [ref=e13]: Study name
    - definition [ref=e14]: PAL0809
    - term [ref=e15]: Body mass (g)
    - definition [ref=e16]: "5100"'''

QUESTION = "What body mass was recorded for the Gentoo penguin with individual ID N12A1 and study name PAL0809?"


def test_a_question_names_its_record_and_the_asked_field() -> None:
    goal = read_goal(QUESTION)
    assert goal.mode == "answer" and goal.strong == ["N12A1", "PAL0809"] and goal.weak == ["Gentoo"]
    assert goal.field == {"body", "mass"}
    assert read_goal("Look up the book “Fog Over Pier” and report its publisher.").field == {"publisher"}
    assert read_goal("Look up the book “Fog Over Pier” and report its publisher.").strong == ["Fog Over Pier"]
    assert goal_mode("Find the Gentoo penguin with individual ID N12A1, and bring up its own page.") == "open"
    assert goal_mode("Go to the full entry for the penguin N12A1.") == "open"
    assert goal_mode("Add the todos “Buy milk” and “Call Anna”.") == "change"
    assert goal_mode("Find the flipper length listed for the penguin N12A1.") == "answer"


def test_the_answer_comes_from_the_row_holding_every_identifying_token() -> None:
    goal = read_goal(QUESTION)
    answer, record = find_answer(LISTING, goal)
    assert answer == "5100"  # not 4400: that row has the same individual ID in another study
    assert record is not None and record.listing and [n.name for n in record.links] == ["Copy row as JSON", "View"]
    assert find_answer(DETAIL, goal)[0] == "5100" and find_answer(TERMS, goal)[0] == "5100"
    other = read_goal("What flipper length was recorded for the Gentoo penguin with individual ID N12A1 and study name PAL0809?")
    assert find_answer(DETAIL, other)[0] == "221"
    missing, row = find_answer(LISTING, other)  # the listing has no flipper column: no answer, but the row to open
    assert missing is None and row is not None and row.listing
    assert find_answer(LISTING, read_goal("What body mass was recorded for the penguin with individual ID N99A9?")) == (None, None)


def test_records_of_a_listing_and_of_a_record_page() -> None:
    rows = page_records(LISTING)
    assert [r.listing for r in rows] == [True, True]
    assert rows[0].fields[:4] == [("Individual ID", "N12A1"), ("studyName", "PAL0708"), ("Species", "Gentoo penguin (Pygoscelis papua)"), ("Body Mass (g)", "4400")]
    (detail,) = page_records(DETAIL)
    assert not detail.listing and ("Flipper Length (mm)", "221") in detail.fields


def test_links_keep_their_urls() -> None:
    links = {e.name: e.url for e in parse_snapshot(LISTING) if e.role == "link"}
    assert links["›"] == "/penguins/content/?page=2" and links["Copy row as JSON"] == "#"


def test_word_match_picks_the_control_sharing_most_words_once() -> None:
    page = """- navigation [ref=e2]:
  - link "Home" [ref=e3]
  - link "Penguin records" [ref=e4]
  - link "Records of the Gentoo penguin study" [ref=e5]
  - button "Gentoo penguin colonies" [ref=e6]
  - textbox "Gentoo penguin search" [ref=e7]"""
    wanted = read_goal(QUESTION).wanted
    assert pick_control(page, wanted, set()) == ("link", "Records of the Gentoo penguin study", "e5")
    assert pick_control(page, wanted, {("link", "Records of the Gentoo penguin study")}) == ("button", "Gentoo penguin colonies", "e6")
    assert pick_control(page, {"unrelated"}, set()) is None


def test_open_goals_end_on_the_record_page_not_on_the_listing() -> None:
    assert goal_mode("Show me the page that describes the penguin with individual ID N88A1.") == "open"
    assert goal_mode("Locate the penguin with study name PAL0809 and individual ID N37A2 and open its record.") == "open"
    assert goal_mode("Show the penguin records ordered from heaviest to lightest.") == "change"
    goal = read_goal("Open the page of the penguin with individual ID N12A1 in study PAL0809.")
    explorer = ExplorerAgent()
    assert explorer._done_opening(goal, DETAIL) and not explorer._done_opening(goal, LISTING)
    split = read_goal("Open the page of the penguin counted in both study PAL0708 and study PAL0809.")
    assert split.strong == ["PAL0708", "PAL0809"] and not explorer._done_opening(split, LISTING)  # on the page, but in no one record


def test_camel_case_labels_match_the_asked_field() -> None:
    assert find_answer(DETAIL, read_goal("Find the study name recorded for the penguin with individual ID N12A1."))[0] == "PAL0809"
