"""Instructions for task DAGs, and the consistency validator that re-infers the DAG from the words alone.

:func:`synthesize` writes one instruction for a composite task. Every subtask's own
instruction becomes one clause, unchanged but for punctuation (``;``, ``:`` and
sentence breaks outside the “…” quotes become commas), so every concrete value
survives. Clauses are mentioned in *mention order*: by depth level, then by position
in the first stored topological order (:func:`mention_order`). Two styles:

* ``natural`` — one sentence per depth level when each node of the level depends on
  exactly the clauses of the previous sentence ("First, …", "Then, …", "After that,
  do both of these in any order: …; and …"); otherwise one sentence per node naming
  its direct predecessors by a quoted value only they carry ("Once “X” and “Y” are
  done, …", "Meanwhile, once “X” is done, …"). When some predecessor has no unique
  quoted value, the explicit style is used instead.
* ``explicit`` — numbered steps, "Step 3, once step 1 and step 2 are done: …"; roots
  read "Step 1, first: …" / "Step 2, also first: …".

An optional leading "Goal: …." sentence states the intent; the parser skips it.

:func:`infer_dag` is a rule-based parser of ordering and parallel words. It protects
quoted text, splits sentences at ``.``/``!``/``?``, reads each sentence's *opener* —
the leading comma/colon-separated chunks made only of connective words (first, then,
next, after that, afterwards, finally, meanwhile, independently, also, in parallel,
in any order, both, all of these, step N, and "once/after/when … is/are done") — and
splits the rest into list items at ``;`` when the opener announces a parallel list.
Each clause gets predecessors by the first rule that applies:

1. a "once/after/when … done" span: the clauses it names ("step N", or a quoted value
   found in an earlier clause);
2. a sequential word (then, next, after that, afterwards, finally, lastly): every
   clause of the previous sentence;
3. "first", or the first sentence: none (a root);
4. a parallel word (meanwhile, independently, also, in parallel, …): the same
   predecessors as the previous clause;
5. no connective at all: every clause of the previous sentence (sentences in a row
   are read as a sequence).

The i-th clause is taken to be ``subtask_ids[i]``. :func:`validate` compares the
inferred DAG with the real one **by reachability** (equal transitive closures, which
for DAGs is the same as equal transitive reductions), so a redundant edge in either
is not a mismatch, but a flattened parallel branch (an extra ordering) or a lost
ordering is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from ...errors import InputError, TaskloomError
from ...llm.client import LLM, LLMError
from ...llm.templates import render_prompt
from ...tasks.dag import Dag
from ...tasks.model import Subtask, Task

__all__ = ["Style", "mention_order", "closure", "reduction", "synthesize", "infer_dag", "infer_dag_llm", "check_consistency", "validate", "InferredDag"]

Edge = tuple[str, str]
Style = str  # "natural" | "explicit"
_QUOTED = re.compile(r"“[^”]*”")
_SLOT = re.compile(r"§(\d+)§")
_SPAN = re.compile(r"\b(?:once|after(?!\s+that\b)|when)\b(.*?)\b(?:is|are|has been|have been)\s+(?:done|finished|completed?)\b")
_VOCAB = set(
    "first then next after that afterwards finally lastly meanwhile independently also in parallel at the same time "
    "simultaneously any order and do these both all of this step".split()
)
_SEQUENTIAL = re.compile(r"\b(?:then|next|after that|afterwards|finally|lastly)\b")
_PARALLEL = re.compile(r"\b(?:meanwhile|independently|also|in parallel|at the same time|simultaneously|in any order|both|all of these)\b")
_LEADING = re.compile(r"\s*(?:first|then|next|after that|afterwards|finally|lastly|meanwhile|independently|also|in parallel|at the same time|simultaneously)\b",
                      re.IGNORECASE)
_LIST = re.compile(r"\b(?:in any order|both|all of these|independently)\b")


# -- graph helpers ----------------------------------------------------------------------------


def closure(nodes: Sequence[str], edges: Sequence[Edge]) -> set[Edge]:
    """Every (a, b) with a path from a to b."""
    succ: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    out: set[Edge] = set()
    for start in succ:
        stack, seen = list(succ[start]), set[str]()
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(succ.get(n, ()))
        out |= {(start, n) for n in seen}
    return out


def reduction(nodes: Sequence[str], edges: Sequence[Edge]) -> list[Edge]:
    """The transitive reduction: edges not implied by a longer path."""
    reach = closure(nodes, edges)
    unique = sorted(set(edges))
    return [(a, b) for a, b in unique if not any((a, c) in reach and (c, b) in reach for c in nodes if c not in (a, b))]


def mention_order(nodes: Sequence[str], edges: Sequence[Edge], orders: Sequence[Sequence[str]] | None = None) -> list[str]:
    """Subtask ids in the order an instruction mentions them: by depth, then by the first stored order."""
    graph = Dag(nodes, edges)
    first = list(orders[0]) if orders else next(graph.iter_orders())
    pos = {n: i for i, n in enumerate(first)}
    return sorted(graph.nodes, key=lambda n: (graph.depth(n), pos.get(n, len(pos))))


# -- synthesis -------------------------------------------------------------------------------


def _protect(text: str) -> tuple[str, list[str]]:
    quotes: list[str] = []

    def keep(m: re.Match[str]) -> str:
        quotes.append(m.group(0))
        return f"§{len(quotes) - 1}§"

    return _QUOTED.sub(keep, text), quotes


def _restore(text: str, quotes: list[str]) -> str:
    return _SLOT.sub(lambda m: quotes[int(m.group(1))], text)


def clause(instruction: str) -> str:
    """A subtask instruction as one clause: no sentence or list breaks outside quotes, no final stop."""
    text, quotes = _protect(" ".join(instruction.split()))
    text = re.sub(r"(?:[.!?]+\s+|[;:]\s*)(\w?)", lambda m: ", " + m.group(1).lower(), text).strip().rstrip(".!?,; ")
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        text = text[0].lower() + text[1:]
    return _restore(text, quotes)


def _values(text: str) -> list[str]:
    return [q[1:-1] for q in _QUOTED.findall(text)]


def _labels(subtasks: Sequence[Subtask]) -> dict[str, str | None]:
    """For each subtask, its last quoted value that no other subtask's instruction quotes."""
    counts: dict[str, int] = {}
    for s in subtasks:
        for v in set(_values(s.instruction)):
            counts[v] = counts.get(v, 0) + 1
    return {s.id: next((v for v in reversed(_values(s.instruction)) if v.strip() and counts[v] == 1), None) for s in subtasks}


def _refs(names: list[str]) -> str:
    return f"{names[0]} is done" if len(names) == 1 else f"{' and '.join(names)} are done"  # no commas: they end an opener


def _items(clauses: list[str]) -> str:
    return "; ".join(clauses[:-1]) + f"; and {clauses[-1]}"


def synthesize(subtasks: Sequence[Subtask], dag: Sequence[Edge], orders: Sequence[Sequence[str]] | None = None, *, style: Style = "natural", intent: str = "") -> str:
    """One instruction that states the DAG's order and parallelism in words and keeps every quoted value."""
    if style not in ("natural", "explicit"):
        raise InputError(f"style {style!r} is unknown; use 'natural' or 'explicit'")
    by_id = {s.id: s for s in subtasks}
    ids = list(by_id)
    order = mention_order(ids, dag, orders)
    direct = reduction(ids, dag)
    preds = {n: sorted((a for a, b in direct if b == n), key=order.index) for n in order}
    text = {n: clause(by_id[n].instruction) for n in order}
    head = f"Goal: {intent.rstrip('.')}. " if intent else ""
    labels = _labels(subtasks)
    if style == "explicit" or any(labels[p] is None for n in order for p in preds[n]):
        steps = {n: i + 1 for i, n in enumerate(order)}
        parts = []
        for n in order:
            when = "also first" if not preds[n] and any(not preds[m] for m in order[: order.index(n)]) else "first"
            if preds[n]:
                when = "once " + _refs([f"step {steps[p]}" for p in preds[n]])
            parts.append(f"Step {steps[n]}, {when}: {text[n]}.")
        return head + " ".join(parts)
    graph = Dag(ids, dag)
    levels: dict[int, list[str]] = {}
    for n in order:
        levels.setdefault(graph.depth(n), []).append(n)
    sentences: list[str] = []
    previous: list[str] = []
    for depth in sorted(levels):
        level = levels[depth]
        many = "both of these" if len(level) == 2 else "all of these"
        if depth == 1:
            sentences.append(f"First, {text[level[0]]}." if len(level) == 1 else f"First, do these independently, in any order: {_items([text[n] for n in level])}.")
            previous = level
        elif all(preds[n] == previous for n in level):
            word = "Then" if len(sentences) % 2 else "After that"
            sentences.append(f"{word}, {text[level[0]]}." if len(level) == 1 else f"{word}, do {many} in any order: {_items([text[n] for n in level])}.")
            previous = level
        else:
            for k, n in enumerate(level):
                opener = "once " + _refs([f"“{labels[p]}”" for p in preds[n]])
                sentences.append(f"{'Meanwhile, ' + opener if k else opener[0].upper() + opener[1:]}, {text[n]}.")
                previous = [n]
    return head + " ".join(sentences)


# -- inference -------------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p.strip()]
    if parts and parts[0].lower().startswith("goal:"):
        parts = parts[1:]
    return [p.rstrip(".!? ") for p in parts if p.rstrip(".!? ")]


def _is_connective(chunk: str) -> bool:
    words = re.findall(r"[a-z]+|\d+", _SPAN.sub(" ", chunk.lower()))
    return bool(_SPAN.search(chunk.lower())) or (bool(words) and all(w in _VOCAB or w.isdigit() for w in words))


def _opener(sentence: str) -> tuple[str, str, bool]:
    """(opener, body, whether the opener ended with a colon)."""
    opener, rest = "", sentence
    while True:
        m = re.search(r"[,:]", rest)
        if not m or not _is_connective(rest[: m.start()]):
            bare = _LEADING.match(rest) if not opener else None  # "Then open …" without a comma
            return (bare.group(0), rest[bare.end():].strip(), False) if bare else (opener, rest.strip(), False)
        opener += " " + rest[: m.start()]
        rest = rest[m.end():]
        if m.group(0) == ":":
            return opener.strip(), rest.strip(), True


def infer_dag(instruction: str, subtask_ids: Sequence[str]) -> list[Edge]:
    """Re-infer the dependency edges from the instruction's words alone (see the module docstring)."""
    protected, quotes = _protect(instruction)
    values = [q[1:-1] for q in quotes]
    clauses: list[str] = []
    preds: list[set[int]] = []
    last_sentence: list[int] = []
    for number, sentence in enumerate(_sentences(protected)):
        opener, body, colon = _opener(sentence)
        low = re.sub(r"^\s*step\s+\d+", " ", opener.lower())
        items = [re.sub(r"^\s*and\s+", "", i).strip() for i in body.split(";")] if colon and _LIST.search(low) else [body]
        span = _SPAN.search(low)
        current: list[int] = []
        for item in items:
            index = len(clauses)
            if span:
                named = {int(s) - 1 for s in re.findall(r"\bstep\s+(\d+)", span.group(1))}
                for slot in _SLOT.findall(span.group(1)):
                    named.add(next((j for j, c in enumerate(clauses) if values[int(slot)] in [values[int(x)] for x in _SLOT.findall(c)]), -1))
                mine = {j for j in named if 0 <= j < index}
            elif _SEQUENTIAL.search(low):
                mine = set(last_sentence)
            elif re.search(r"\bfirst\b", low) or number == 0:
                mine = set()
            elif _PARALLEL.search(low):
                mine = set(preds[-1]) if preds else set()
            else:
                mine = set(last_sentence)
            clauses.append(item)
            preds.append(mine)
            current.append(index)
        last_sentence = current
    if len(clauses) != len(subtask_ids):
        raise InputError(f"the instruction reads as {len(clauses)} subtask clauses, but the task has {len(subtask_ids)} subtasks")
    return sorted({(subtask_ids[a], subtask_ids[b]) for b, mine in enumerate(preds) for a in mine}, key=lambda e: (subtask_ids.index(e[0]), subtask_ids.index(e[1])))


class InferredEdge(BaseModel):
    before: str = Field(description="Id of the subtask that must be finished first.")
    after: str = Field(description="Id of the subtask that can only start once 'before' is finished.")


class InferredDag(BaseModel):
    """An LLM's reading of the dependencies stated in an instruction."""

    edges: list[InferredEdge] = Field(default_factory=list)


async def infer_dag_llm(instruction: str, subtasks: Sequence[Subtask], llm: LLM) -> list[Edge]:
    """Let an LLM infer the edges from the instruction (never shown the real DAG); raises LLMError on unknown ids."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": render_prompt("consistency_system.j2")},
        {"role": "user", "content": render_prompt("consistency_user.j2", instruction=instruction, subtasks=subtasks)},
    ]
    parsed = (await llm.complete(messages, schema=InferredDag, tag="consistency")).parsed
    ids = [s.id for s in subtasks]
    unknown = sorted({x for e in parsed.edges for x in (e.before, e.after) if x not in ids})
    if unknown:
        raise LLMError(f"the model named subtasks that do not exist: {unknown}")
    return sorted({(e.before, e.after) for e in parsed.edges if e.before != e.after}, key=lambda e: (ids.index(e[0]), ids.index(e[1])))


def _compare(ids: list[str], real: Sequence[Edge], inferred: list[Edge]) -> tuple[bool, list[Edge], str | None]:
    want, got = closure(ids, real), closure(ids, inferred)
    if want == got:
        return True, inferred, None
    extra, missing = sorted(got - want), sorted(want - got)
    why = []
    if extra:
        why.append(f"the instruction orders {extra} that the DAG leaves independent")
    if missing:
        why.append(f"the instruction loses the orderings {missing}")
    return False, inferred, "; ".join(why)


def check_consistency(task: Task) -> tuple[bool, list[Edge], str | None]:
    """Rule-based validation: (ok, inferred edges, reason when not ok)."""
    ids = mention_order([s.id for s in task.subtasks], task.dag, task.orders)
    try:
        inferred = infer_dag(task.instruction, ids)
    except InputError as exc:
        return False, [], str(exc)
    return _compare(ids, task.dag, inferred)


async def validate(task: Task, llm: LLM | None = None) -> tuple[bool, list[Edge], str | None]:
    """Re-infer the DAG from the instruction (by the LLM when one is available, else by rules) and compare by reachability."""
    if llm is None or not llm.available:
        return check_consistency(task)
    try:
        inferred = await infer_dag_llm(task.instruction, task.subtasks, llm)
    except TaskloomError as exc:
        return False, [], f"the LLM could not infer the dependencies: {exc}"
    return _compare([s.id for s in task.subtasks], task.dag, inferred)
