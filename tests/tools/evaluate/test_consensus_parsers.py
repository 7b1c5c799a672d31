"""Parsers of other agents' action logs: real ABP (Online-Mind2Web) and BrowserGym (AgentRewardBench) strings, Playwright code."""

from __future__ import annotations

from typing import Any

import pytest

from taskloom.tools.evaluate.consensus.parsers import PARSERS, browsergym_history, normalize_key, parse_abp, parse_browsergym, parse_code

# Real "Action History:" sections (AgentRewardBench, WebArena task 164), copied from `input_text` from the
# header on and cut after the first snapshot note. Qwen's second reasoning holds a numbered list; Claude's
# send_msg_to_user holds a numbered list in escaped line breaks, and its reasoning repeats the call.
QWEN_HISTORY = """Action History:
1. click('1695'). Reasoning: To find the main criticisms of the product, I need to access the reviews section. The page currently shows a link labeled "Reviews (3)" which likely leads to the reviews. Clicking this link should display the reviews and any criticisms mentioned by customers.
2. send_msg_to_user("The main criticisms of the product are: 'Those labial never came to me and I would like them again because I paid for them' and 'DryUneven color'."). Reasoning: The goal is to identify the main criticisms of the product based on the customer reviews. From the reviews, the main criticisms are:

1. "Those labial never came to me and I would like them again because I paid for them" - This indicates a delivery issue.
2. "DryUneven color" - This indicates dissatisfaction with the product's texture and color consistency.

These are the relevant sentences that highlight the main criticisms.
3. None. Reasoning: None

The potentially important snapshots of the webpage in the agent's trajectory and their reasons:
1. The image shows customer reviews for a product, specifically a Mineralogie All Natural Lip Gloss. The reviews include both positive and negative feedback. The relevant sentences related to criticisms are: - "Those labial never came to me and I would like them again because I paid for them" by Mary Mir. - "DryUneven color" by catherine brown. These sentences express dissatisfaction with the product, indicating issues with delivery and product quality.
"""

CLAUDE_HISTORY = r"""Action History:
1. click('1668'). Reasoning: <action>
click('1668')
</action>
2. send_msg_to_user("Based on the reviews, the main criticisms of the Mineralogie All Natural Lip Gloss in Ruby Rose are:\n\n1. \"Dry\"\n2. \"Uneven color\"\n\nThese criticisms come from a review by catherine brown who gave the product a 1-star rating (20%). The other two reviews don't contain criticisms of the product itself - one is a complaint about not receiving the product, and the other is a positive review."). Reasoning: <action>
send_msg_to_user("Based on the reviews, the main criticisms of the Mineralogie All Natural Lip Gloss in Ruby Rose are:\n\n1. \"Dry\"\n2. \"Uneven color\"\n\nThese criticisms come from a review by catherine brown who gave the product a 1-star rating (20%). The other two reviews don't contain criticisms of the product itself - one is a complaint about not receiving the product, and the other is a positive review.")
</action>
3. None. Reasoning: None

The potentially important snapshots of the webpage in the agent's trajectory and their reasons:
1. The image shows customer reviews for a product, specifically a Mineralogie All Natural Lip Gloss. The reviews include both positive and negative feedback. The relevant sentences related to criticisms are: - "Those labial never came to me and I would like them again because I paid for them" by Mary Mir. - "DryUneven color" by catherine brown. These sentences express dissatisfaction with the product, indicating issues with delivery and product quality.
"""

ABP_CASES = [
    # (real string, canonical text, kind, target fields, value)
    ("Click at (660, 77)", "click(x='660', y='77')", "click", {"x": 660.0, "y": 77.0}, None),
    ("Hover at (1003, 282)", "hover(x='1003', y='282')", "other", {"x": 1003.0, "y": 282.0}, None),
    ("Scroll (delta_x=0, delta_y=300)", "scroll(direction='down')", "scroll", None, "down"),
    ("Scroll (delta_x=0, delta_y=-1000)", "scroll(direction='up')", "scroll", None, "up"),
    ("Scroll (delta_x=200, delta_y=0)", "scroll(direction='right')", "scroll", None, "right"),
    ("Navigate to https://www.bestbuy.com/", "navigate(url='https://www.bestbuy.com/')", "navigate", None, "https://www.bestbuy.com/"),
    ("Navigate to about:blank", "navigate(url='about:blank')", "navigate", None, "about:blank"),
    ("Navigate back", "go_back()", "back", None, None),
    ("Navigate reload", "refresh()", "other", None, None),
    ('Type "support services"', "type(text='support services')", "type", None, "support services"),
    (
        'Type "Samsung LG 27" 28" 32" 4K IPS monitor"',
        'type(text=\'Samsung LG 27" 28" 32" 4K IPS monitor\')',
        "type",
        None,
        'Samsung LG 27" 28" 32" 4K IPS monitor',
    ),
    ('Type "men\'s blazers"', 'type(text="men\'s blazers")', "type", None, "men's blazers"),
    ('Type ""', "type()", "type", None, None),
    ("Press ENTER", "press(key='Enter')", "key", None, "Enter"),
    ("Press ESCAPE", "press(key='Escape')", "key", None, "Escape"),
    ("Press CONTROL+HOME", "press(key='Control+Home')", "key", None, "Control+Home"),
    ("Press CONTROL+a", "press(key='Control+a')", "key", None, "Control+a"),
    ("Press BS", "press(key='Backspace')", "key", None, "Backspace"),
    ("Press PAGE_DOWN", "press(key='PageDown')", "key", None, "PageDown"),
    ("Press ARROWDOWN", "press(key='ArrowDown')", "key", None, "ArrowDown"),
    ("Select picker sp_1 -> Select option(s) [3]", "select(option='3', id='sp_1')", "select", {"element_id": "sp_1"}, "3"),
    ("Select picker sp_4 -> Select option(s) [211]", "select(option='211', id='sp_4')", "select", {"element_id": "sp_4"}, "211"),
    ("Select picker sp_2 -> Select option(s) [1, 2]", "select(option='1, 2', id='sp_2')", "select", {"element_id": "sp_2"}, "1, 2"),
    ("Slider (horizontal) set to 22 [range 18-85]", "select(option='22', element='slider')", "select", {"name": "slider"}, "22"),
    ("Drag from (520, 460) to (615, 460)", "drag(x='520', y='460', x2='615', y2='460')", "other", None, None),
    ("Navigate forward", "other(text='Navigate forward')", "other", None, "Navigate forward"),
    ("Select picker sp_7 -> CANCEL", "other(text='Select picker sp_7 -> CANCEL')", "other", None, "Select picker sp_7 -> CANCEL"),
]

BROWSERGYM_CASES = [
    ("click('226')", "click(id='226')", "click", {"element_id": "226"}, None),
    ("click('42', button='left', modifiers=[])", "click(id='42')", "click", {"element_id": "42"}, None),
    ("click('12', button='right')", "click(id='12')", "click", {"element_id": "12"}, None),
    ("click('[339] link')", "click(element='link', id='339')", "click", {"element_id": "339", "role": "link"}, None),
    ("click('[bid=\"722\"]')", "click(id='722')", "click", {"element_id": "722"}, None),
    ("click('2337') # Click on the 'Back' button to go to the previous step", "click(id='2337')", "click", {"element_id": "2337"}, None),
    ("dblclick('3')", "dblclick(id='3')", "click", {"element_id": "3"}, None),
    ("hover('156')", "hover(id='156')", "other", {"element_id": "156"}, None),
    ("focus('3')", "click(id='3')", "click", {"element_id": "3"}, None),
    ("fill('823', 'best')", "type(text='best', id='823')", "type", {"element_id": "823"}, "best"),
    ("clear('5')", "type(id='5')", "type", {"element_id": "5"}, None),
    ("select_option('967', 'Processing')", "select(option='Processing', id='967')", "select", {"element_id": "967"}, "Processing"),
    (
        "select_option('802', ['General', 'Wholesale'])",
        "select(option='General, Wholesale', id='802')",
        "select",
        {"element_id": "802"},
        "General, Wholesale",
    ),
    ("scroll(0, 1000)", "scroll(direction='down')", "scroll", None, "down"),
    ("scroll(-500, 0)", "scroll(direction='left')", "scroll", None, "left"),
    ("keyboard_press('Enter')", "press(key='Enter')", "key", None, "Enter"),
    ("press('12', 'Enter')", "press(key='Enter')", "key", None, "Enter"),
    ("keyboard_type('abc')", "type(text='abc')", "type", None, "abc"),
    (
        "goto('https://gitlab.com/search?search=metaseq')",
        "navigate(url='https://gitlab.com/search?search=metaseq')",
        "navigate",
        None,
        "https://gitlab.com/search?search=metaseq",
    ),
    ("go_back()", "go_back()", "back", None, None),
    ("new_tab()", "new_tab()", "other", None, None),
    ("noop()", "wait(seconds='1')", "wait", None, "1"),
    ("noop(wait_ms=2000)", "wait(seconds='2')", "wait", None, "2"),
    (
        'send_msg_to_user("The price range for Ugreen products is $9.99 to $38.99.")',
        "answer(text='The price range for Ugreen products is $9.99 to $38.99.')",
        "answer",
        None,
        "The price range for Ugreen products is $9.99 to $38.99.",
    ),
    (
        "report_infeasible(\"No issue with 'homepage content' in the title found.\")",
        "report_infeasible(text=\"No issue with 'homepage content' in the title found.\")",
        "answer",
        None,
        "No issue with 'homepage content' in the title found.",
    ),
    ("mouse_click(10, 20)", "click(x='10', y='20')", "click", {"x": 10.0, "y": 20.0}, None),
    ("mouse_move(5, 6)", "hover(x='5', y='6')", "other", {"x": 5.0, "y": 6.0}, None),
    ("go_forward()", "other(text='go_forward()')", "other", None, "go_forward()"),
    ("tab_focus(1)", "other(text='tab_focus(1)')", "other", None, "tab_focus(1)"),
    ("upload_file('4', 'cv.pdf')", "other(text=\"upload_file('4', 'cv.pdf')\")", "other", None, "upload_file('4', 'cv.pdf')"),
]

CODE_CASES = [
    ("page.goto('https://example.org/')", "navigate(url='https://example.org/')", "navigate", None, "https://example.org/"),
    ("await page.goto('https://example.org/');", "navigate(url='https://example.org/')", "navigate", None, "https://example.org/"),
    ("page.go_back()", "go_back()", "back", None, None),
    ("await page.goBack();", "go_back()", "back", None, None),
    ("page.reload()", "refresh()", "other", None, None),
    ("page.locator('#q').fill('dune')", "type(text='dune', selector='#q')", "type", {"selector": "#q"}, "dune"),
    ("page.locator('e10').fill('x')", "type(text='x', id='e10')", "type", {"element_id": "e10"}, "x"),
    ("page.locator('aria-ref=e10').click()", "click(id='e10')", "click", {"element_id": "e10"}, None),
    (
        "page.get_by_role('button', name='Search').click()",
        "click(text='Search', element='button')",
        "click",
        {"role": "button", "name": "Search"},
        None,
    ),
    (
        "await page.getByRole('button', { name: 'Search' }).click();",
        "click(text='Search', element='button')",
        "click",
        {"role": "button", "name": "Search"},
        None,
    ),
    (
        "await page.getByRole('link', { name: 'Sign in', exact: true }).first().click();",
        "click(text='Sign in', element='link')",
        "click",
        {"role": "link", "name": "Sign in"},
        None,
    ),
    (
        "page.get_by_role('link', name='Go').nth(0).hover()",
        "hover(text='Go', element='link')",
        "other",
        {"role": "link", "name": "Go"},
        None,
    ),
    ("page.get_by_text('Sign in').first.click()", "click(text='Sign in')", "click", {"name": "Sign in"}, None),
    ("await page.getByText('Sign in').dblclick();", "dblclick(text='Sign in')", "click", {"name": "Sign in"}, None),
    ("page.get_by_label('Email').fill('a@b.c')", "type(text='a@b.c', element='Email')", "type", {"name": "Email"}, "a@b.c"),
    ("page.get_by_placeholder('Search').type('dune')", "type(text='dune', element='Search')", "type", {"name": "Search"}, "dune"),
    (
        "await page.getByPlaceholder('Search').pressSequentially('dune');",
        "type(text='dune', element='Search')",
        "type",
        {"name": "Search"},
        "dune",
    ),
    (
        "page.get_by_role('checkbox', name='Remember me').check()",
        "click(text='Remember me', element='checkbox')",
        "click",
        {"role": "checkbox", "name": "Remember me"},
        None,
    ),
    ("page.get_by_label('Size').select_option('M')", "select(option='M', element='Size')", "select", {"name": "Size"}, "M"),
    (
        "await page.getByLabel('Size').selectOption({ label: 'Large' });",
        "select(option='Large', element='Size')",
        "select",
        {"name": "Size"},
        "Large",
    ),
    ("page.locator('#q').press('Enter')", "press(key='Enter')", "key", None, "Enter"),
    ("page.keyboard.press('ctrl+a')", "press(key='Control+a')", "key", None, "Control+a"),
    ("await page.keyboard.type('dune');", "type(text='dune')", "type", None, "dune"),
    ("page.mouse.click(100, 200)", "click(x='100', y='200')", "click", {"x": 100.0, "y": 200.0}, None),
    ("page.mouse.wheel(0, -300)", "scroll(direction='up')", "scroll", None, "up"),
    ("page.wait_for_timeout(1000)", "wait(seconds='1')", "wait", None, "1"),
    ("await page.waitForTimeout(1500);", "wait(seconds='1.5')", "wait", None, "1.5"),
    ("page.fill('#q', 'dune')", "type(text='dune', selector='#q')", "type", {"selector": "#q"}, "dune"),
    (
        "expect(page.get_by_text('Done')).to_be_visible()",
        "other(text=\"expect(page.get_by_text('Done')).to_be_visible()\")",
        "other",
        None,
        "expect(page.get_by_text('Done')).to_be_visible()",
    ),
]


def _check(action: Any, source: str, text: str, kind: str, target: dict[str, Any] | None, value: str | None) -> None:
    assert action is not None
    assert action.text == text
    assert action.kind == kind
    assert (action.target.model_dump(exclude_none=True) if action.target else None) == target
    assert action.value == value
    assert action.source == source
    assert action.confidence == (0.1 if action.name == "other" else 0.95)


@pytest.mark.parametrize(("source", "text", "kind", "target", "value"), ABP_CASES)
def test_abp_real_strings(source: str, text: str, kind: str, target: dict[str, Any] | None, value: str | None) -> None:
    _check(parse_abp(source), source, text, kind, target, value)


@pytest.mark.parametrize(("source", "text", "kind", "target", "value"), BROWSERGYM_CASES)
def test_browsergym_actions(source: str, text: str, kind: str, target: dict[str, Any] | None, value: str | None) -> None:
    _check(parse_browsergym(source), source, text, kind, target, value)


@pytest.mark.parametrize(("source", "text", "kind", "target", "value"), CODE_CASES)
def test_playwright_code(source: str, text: str, kind: str, target: dict[str, Any] | None, value: str | None) -> None:
    _check(parse_code(source), source, text, kind, target, value)


@pytest.mark.parametrize(
    ("key", "expected"),
    [("ENTER", "Enter"), ("ESC", "Escape"), ("TAB", "Tab"), ("BACKSPACE", "Backspace"), ("DELETE", "Delete"), ("PAGEUP", "PageUp"),
     ("END", "End"), ("SPACE", "Space"), ("ARROWLEFT", "ArrowLeft"), ("CONTROL+END", "Control+End"), ("CONTROL+A", "Control+A"),
     ("CMD+SHIFT+k", "Meta+Shift+k"), ("alt+F4", "Alt+F4"), ("Control++", "Control++"), ("a", "a"), ("Enter", "Enter")],
)  # fmt: skip
def test_key_names_are_playwright_names(key: str, expected: str) -> None:
    assert normalize_key(key) == expected


def test_browsergym_no_action_marker_is_none() -> None:
    assert parse_browsergym("None") is None
    assert parse_browsergym(" None ") is None


def test_wait_ms_of_noop_becomes_seconds() -> None:
    action = parse_browsergym("noop(wait_ms=500)")
    assert action is not None and action.args == {"seconds": 0.5}


def test_long_answer_keeps_its_full_value() -> None:
    message = "A" * 120
    action = parse_browsergym(f"send_msg_to_user('{message}')")
    assert action is not None and action.value == message and action.text == f"answer(text='{'A' * 79}…')"


ODD_INPUTS = ["", "   ", "None.", "click(", "click(bid)", "scroll('a', 'b')", "noop(wait_ms='soon')", "((((", "page", "page.mouse.wheel('x', 'y')",
              "__import__('os').system('true')", "Click at (a, b)", "Type \"unterminated", "x" * 5000, "page.locator(sel).click()", "\x00"]  # fmt: skip


@pytest.mark.parametrize("parser", ["abp", "browsergym", "code"])
@pytest.mark.parametrize("text", ODD_INPUTS)
def test_odd_input_becomes_other_without_raising(parser: str, text: str) -> None:
    action = PARSERS[parser](text)
    assert action is not None
    assert action.name == "other" and action.kind == "other"
    assert action.confidence == 0.1
    assert action.source == text


def test_parsers_registry() -> None:
    assert PARSERS == {"abp": parse_abp, "browsergym": parse_browsergym, "code": parse_code}


def test_history_of_real_prompt_with_numbered_list_in_reasoning() -> None:
    history = browsergym_history("User Task: Summarise the criticisms.\n\n" + QWEN_HISTORY)
    assert history == [
        "click('1695')",
        "send_msg_to_user(\"The main criticisms of the product are: 'Those labial never came to me and I would like them again because I paid for them' and 'DryUneven color'.\")",
        "None",
    ]
    actions = [parse_browsergym(h) for h in history]
    assert [a.kind if a else None for a in actions] == ["click", "answer", None]


def test_history_of_real_prompt_with_multi_line_message() -> None:
    history = browsergym_history(CLAUDE_HISTORY)
    assert len(history) == 3 and history[0] == "click('1668')" and history[2] == "None"
    assert history[1].startswith('send_msg_to_user("Based on the reviews') and history[1].endswith('a positive review.")')
    answer = parse_browsergym(history[1])
    assert answer is not None and answer.kind == "answer"
    assert answer.value is not None and '\n\n1. "Dry"\n2. "Uneven color"\n\n' in answer.value


SYNTHETIC_HISTORY = """Action History:
1. fill('12', 'dune'). Reasoning: Three steps remain:
1. search
2. open the first result. Reasoning: not a real item
3. read it
2. send_msg_to_user("Found it:
1. Dune. Reasoning: by Herbert
2. Emma"). Reasoning: The list is complete.
3. None. Reasoning: None
"""


def test_history_with_raw_line_breaks_and_reasoning_inside_the_call() -> None:
    history = browsergym_history(SYNTHETIC_HISTORY)
    assert history == ["fill('12', 'dune')", 'send_msg_to_user("Found it:\n1. Dune. Reasoning: by Herbert\n2. Emma")', "None"]
    answer = parse_browsergym(history[1])
    assert answer is not None and answer.value == "Found it:\n1. Dune. Reasoning: by Herbert\n2. Emma"


def test_history_without_header_or_items() -> None:
    assert browsergym_history("User Task: nothing here") == []
    assert browsergym_history("Action History:\n") == []
