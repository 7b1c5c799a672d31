"""Merging canonical actions: edit distance, the θ boundary, blocking, the two passes, order independence."""

from __future__ import annotations

import random

import pytest
from networkx.utils import UnionFind

from taskloom.tools.evaluate.consensus import (
    AgentTrajectory,
    CanonicalAction,
    block_key,
    build_consensus,
    canonicalize_text,
    levenshtein,
    max_distance,
    merge_actions,
    naive_merge,
    similarity,
    sorted_groups,
)
from taskloom.tools.evaluate.consensus.canonicalize import make_action


def reference_levenshtein(a: str, b: str) -> int:
    """Textbook Wagner–Fischer, for comparison."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def traj(i: int, texts: list[str], ok: bool = True, agent: str = "a") -> AgentTrajectory:
    return AgentTrajectory(id=f"t{i}", task_id="task", agent=agent, actions=[canonicalize_text(t) for t in texts], success=ok)


def test_levenshtein_matches_the_textbook_and_respects_the_bound() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 10)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 10)))
        d = reference_levenshtein(a, b)
        assert levenshtein(a, b) == d
        for bound in range(6):
            assert levenshtein(a, b, bound) == (d if d <= bound else bound + 1)
    assert levenshtein("kitten", "sitting") == 3 and levenshtein("", "abc") == 3 and levenshtein("abc", "abc") == 0


def test_max_distance_agrees_with_similarity() -> None:
    for theta in (0.5, 0.8, 0.9, 0.95, 1.0):
        for longest in range(1, 120):
            d = max_distance(longest, theta)
            assert 1 - d / longest >= theta
            assert d + 1 > longest or 1 - (d + 1) / longest < theta
    assert max_distance(20, 0.9) == 2 and max_distance(30, 0.9) == 3 and max_distance(19, 0.9) == 1


def test_theta_boundary() -> None:
    exact = ("click(text='Submit')", "click(text='Sybmjt')")  # 20 chars, 2 substitutions: 1 - 2/20 = 0.9
    above = ("click(text='Submits')", "click(text='Sabmats')")  # 21 chars: 1 - 2/21 = 0.9048
    below = ("click(text='Submt')", "click(text='Sxbmy')")  # 19 chars: 1 - 2/19 = 0.8947
    assert [len(p[0]) for p in (exact, above, below)] == [20, 21, 19]
    assert similarity(*exact) == pytest.approx(0.9) and similarity(*above) == pytest.approx(19 / 21) and similarity(*below) == pytest.approx(17 / 19)
    for pair, merged in ((exact, True), (above, True), (below, False)):
        result = merge_actions([traj(0, [pair[0]]), traj(1, [pair[1]])])
        assert (result.root[pair[0]] == result.root[pair[1]]) is merged, pair
        assert result.stats.nodes == (1 if merged else 2)


def test_blocking_keeps_different_action_names_apart() -> None:
    click = "click(text='A long menu entry called Settings and privacy', element='link')"
    hover = "hover(text='A long menu entry called Settings and privacy', element='link')"
    assert similarity(click, hover) >= 0.9  # the paper's rule alone would merge them
    result = merge_actions([traj(0, [click]), traj(1, [hover])])
    assert result.root[click] != result.root[hover] and result.stats.blocks == 2 and result.stats.comparisons == 0
    assert block_key("navigate", {"url": "https://Shop.example.org/a?b=1"}) == "navigate|shop.example.org"
    assert block_key("type", {"text": "x", "element": "Search  The Catalogue"}) == "type|search the catalogue"
    assert block_key("scroll", {"direction": "down"}) == "scroll"


def test_step_pass_then_cross_step_pass() -> None:
    a, b = "click(text='Search')", "click(text='Saerch')"  # 0.9 similar
    same_step = merge_actions([traj(0, [a, "Scroll down"]), traj(1, [b, "Scroll down"])])
    assert (same_step.stats.step_merges, same_step.stats.cross_step_merges) == (1, 0)
    cross = merge_actions([traj(0, [a, "Scroll down"]), traj(1, ["Scroll down", b])])
    assert (cross.stats.step_merges, cross.stats.cross_step_merges) == (0, 1)
    assert cross.root[a] == cross.root[b] and cross.stats.nodes == 2
    layered = merge_actions([traj(0, [a, "Scroll down"]), traj(1, ["Scroll down", b])], cross_step=False)
    assert layered.stats.nodes == 4 and layered.stats.cross_step_merges == 0  # (step, text) keys: nothing shared
    assert layered.cluster_of(1, "scroll(direction='down')") != layered.cluster_of(0, "scroll(direction='down')")


def test_exact_duplicates_collapse_and_labels_are_the_most_frequent_member() -> None:
    texts = ["click(text='Search')"] * 3 + ["click(text='Saerch')"] * 3 + ["click(text='Serach')"]
    result = merge_actions([traj(i, [t]) for i, t in enumerate(texts)])
    assert result.stats.actions == 7 and result.stats.distinct == 3 and result.stats.nodes == 1
    (root,) = result.members
    assert root == "click(text='Saerch')"  # smallest key is the root
    assert result.labels[root] == "click(text='Saerch')"  # 3 vs 3 occurrences: ties go to the smallest string
    result = merge_actions([traj(i, [t]) for i, t in enumerate(texts + ["click(text='Search')"])])
    assert result.labels[next(iter(result.members))] == "click(text='Search')"


def test_groups_are_keyed_by_the_smallest_member_whatever_the_order() -> None:
    for order in ([("d", "c"), ("b", "a"), ("c", "b")], [("a", "b"), ("b", "c"), ("c", "d")]):
        uf = UnionFind("abcde")
        for x, y in order:
            uf.union(x, y)
        assert sorted_groups(uf) == {"a": ["a", "b", "c", "d"], "e": ["e"]}
        assert list(sorted_groups(uf)) == ["a", "e"]


def test_merge_equals_the_naive_all_pairs_merge_within_one_block() -> None:
    rng = random.Random(3)
    bases = ["dune frank herbert", "foundation", "the left hand of darkness", "solaris"]
    actions = []
    for _ in range(60):
        q = list(rng.choice(bases))
        for _ in range(rng.randint(0, 2)):
            i = rng.randrange(len(q))
            q[i] = rng.choice("abcdefghijklmnopqrstuvwxyz ")
        actions.append(make_action("type", {"text": "".join(q), "element": "Search"}, confidence=1.0, source="test"))
    texts = [a.text for a in actions]
    ours = merge_actions([AgentTrajectory(id=str(i), success=True, actions=[a]) for i, a in enumerate(actions)])
    naive = naive_merge(texts)
    naive_sets = sorted(sorted({texts[j] for j in naive if naive[j] == r}) for r in set(naive.values()))
    our_sets = sorted(sorted(set(m)) for m in ours.members.values())
    assert our_sets == naive_sets and 1 < len(our_sets) < len(set(texts))


def _random_set(seed: int) -> list[AgentTrajectory]:
    rng = random.Random(seed)
    vocab = ["Go to shop.example.org", "clicked the 'Catalogue' link", "Scroll down", "Go back", "clicked the 'Search' button", "Select 'Poetry' from the Genre dropdown",
             "clicked the 'Advanced search' link", "Press Enter", "clicked the 'Place hold' button"]  # fmt: skip
    queries = ["dune", "dnue", "Dune", "dune novel", "foundation", "foundatoin"]
    out = []
    for i in range(80):
        texts = [rng.choice(vocab) if rng.random() < 0.7 else f'type "{rng.choice(queries)}" into search' for _ in range(rng.randint(0, 8))]
        if rng.random() < 0.3 and texts:
            texts.insert(rng.randrange(len(texts)), texts[0])  # a repeat, so the graph has cycles
        out.append(traj(i, texts, ok=rng.random() < 0.5, agent=rng.choice(["x", "y", "z"])))
    return out


@pytest.mark.parametrize("cross_step", [True, False])
def test_shuffled_input_gives_an_identical_graph(cross_step: bool) -> None:
    trajs = _random_set(11)
    reference = build_consensus(trajs, cross_step=cross_step).model_dump_json()
    rng = random.Random(5)
    for _ in range(3):
        shuffled = trajs[:]
        rng.shuffle(shuffled)
        assert build_consensus(shuffled, cross_step=cross_step).model_dump_json() == reference


def test_field_merging_by_what_the_element_is() -> None:
    def act(name: str, page: str | None = None, **fields: object) -> CanonicalAction:
        return make_action(name, dict(fields), confidence=1.0, source="t", url=page)

    runs = [
        [act("navigate", url="https://food.example:443/recipes/?b=2&a=1"), act("click", text="Creamy Pasta (1,234)", element="link"),
         act("click", element="image", page="https://food.example/recipes/1"), act("click", text="25", element="gridcell", page="https://cal.example/july")],
        [act("navigate", url="https://food.example/recipes?a=1&b=2"), act("click", text="Creamy pasta 1,301 ratings", element="link"),
         act("click", element="image", page="https://food.example/recipes/2"), act("click", text="25", element="gridcell", page="https://cal.example/october")],
    ]  # fmt: skip
    graph = build_consensus([AgentTrajectory(id=str(i), agent="a", success=True, actions=a) for i, a in enumerate(runs)])
    node = {v: n for n in graph.nodes for v in n.variants}
    assert node["navigate(url='https://food.example:443/recipes/?b=2&a=1')"].visits == 2  # default port, trailing slash, query order
    assert node["click(text='Creamy Pasta (1,234)', element='link')"].visits == 2  # rating counts are not the link's name
    assert node["click(element='image')"].visits == 1 and len([n for n in graph.nodes if "click(element='image')" in n.variants]) == 2  # unnamed: per page
    assert len([n for n in graph.nodes if "click(text='25', element='gridcell')" in n.variants]) == 2  # day 25 of July is not of October


def test_calendar_days_merge_by_their_date() -> None:
    """A day named by its date merges by the date in any spelling; a bare day number on one page
    merges only after as many "Next month" steps (25 July is not 25 October on the same calendar page)."""

    def click(text: str) -> CanonicalAction:
        return make_action("click", {"text": text, "element": "gridcell"}, confidence=1.0, source="t", url="https://trips.example/book")

    runs = [
        [click("Choose Saturday, July 25th, 2026"), click("25")],
        [click("Sat Jul 25 2026"), click("Next month"), click("25")],
        [click("25 July 2026"), click("Next month"), click("25")],
        [click("25 October 2026"), click("Next month"), click("Next month"), click("Next month"), click("25")],
    ]
    graph = build_consensus([AgentTrajectory(id=str(i), agent="a", success=True, actions=a) for i, a in enumerate(runs)])
    visits = {v: n.visits for n in graph.nodes for v in n.variants}
    july = [n for n in graph.nodes if "click(text='Sat Jul 25 2026', element='gridcell')" in n.variants][0]
    assert set(july.variants) == {
        "click(text='Choose Saturday, July 25th, 2026', element='gridcell')", "click(text='Sat Jul 25 2026', element='gridcell')",
        "click(text='25 July 2026', element='gridcell')",
    } and july.visits == 3
    days = sorted(n.visits for n in graph.nodes if "click(text='25', element='gridcell')" in n.variants)
    assert days == [1, 1, 2]  # no step, one step (two runs), three steps
    assert visits["click(text='25 October 2026', element='gridcell')"] == 1
