"""The text `GuardedCodeSearchTool` gives the LLM for one search.

Each result is one numbered block: a title line saying what it was judged against
(`guardrail.verdict_text.describe`: your tests, the retriever's tests, or only its own doctests)
and the code. The first sentence says what the agent may do with the results: use verified code;
know that code verified only by its own doctests was not checked against the request; import a
function that exists but could not run here for want of its module, rather than rewrite it.

When nothing passed and candidates ran and failed (``dropped``), the first sentence says how
many, then the first failing test and what each candidate returned there, and whether they agree
(`guardrail.verdict_text.all_failed`): a test that expects the wrong value reads differently from
code the index lacks. When candidates passed but were withheld because they disagree (the
``agree`` policy), it says so, with the gate's question (`guardrail.verdict_text.disagreeing`).
Their code is not shown.

When the gate asked (the verified results disagree on an input), its question follows the first
sentence, with a ready-to-paste test for each answer.

Code, names, paths and messages come from the index and from candidates: each is one cleaned,
capped line (`guardrail.safetext`), and code sits in a fence longer than any run of backticks
inside it, so a snippet cannot close its block and write a forged ``VERIFIED`` label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document

from guardrail.integration import METADATA_KEY, question_from_metadata
from guardrail.safetext import clean, one_line
from guardrail.sources import SpecSource
from guardrail.verdict_text import (
    decide,
    describe,
    is_verified,
    lacks_context,
    location,
    nothing_handed_over,
    where_it_lives,
)

__all__ = ["CODE_LIMIT", "render_for_llm"]

CODE_LIMIT = 100_000
"""Characters of one snippet's code shown to the LLM; longer code ends in a visible marker."""
_BACKTICKS = re.compile("`+")
_OWN = frozenset({SpecSource.STORED.value, SpecSource.DOCTEST.value})
_THEIR = {
    SpecSource.PROVIDER.value: "the tests the retriever's test provider gave",
    SpecSource.STORED.value: "only the tests stored with them",
    SpecSource.DOCTEST.value: "only their own doctests",
}


def render_for_llm(
    query: str,
    documents: Sequence[Document],
    *,
    tests: Sequence[str] | None = None,
    dropped: Sequence[Document] = (),
) -> str:
    """Gated documents as text for an LLM: each labelled VERIFIED or UNVERIFIED with what it was
    judged against, verified first.

    When no document is verified the text says so in its first sentence, so that an agent does
    not mistake untested code for a solution; when one could not run for want of its module or
    a package, the sentence gives the import that reaches it; when candidates ran and failed
    (``dropped``: the Documents the gate dropped, with their verdicts), it says what they
    returned on the first failing test.
    """
    yours = "your tests" if tests else "the retriever's tests"
    blocks = [_block(number, d, yours) for number, d in enumerate(documents, start=1)]
    quoted = one_line(repr(query))
    head = _head(quoted, documents, yours, bool(tests))
    if dropped and not any(is_verified(_verdict(d)) for d in documents):
        pairs = [(_verdict(d), d.metadata) for d in dropped]
        failed = nothing_handed_over(quoted, pairs, yours=yours)
        # Code that could not run for want of its module still matters: it follows.
        lacking = any(lacks_context(_verdict(d)) for d in documents)
        head = f"{failed}\n{head}" if lacking else failed
    return "\n\n".join([head, *_question(documents), *blocks])


def _question(documents: Sequence[Document]) -> list[str]:
    """The gate's question, when verified results disagree: rendered again from the validated
    model (never a stored text), with each answer's test ready to paste."""
    question = question_from_metadata(documents[0].metadata) if documents else None
    if question is None:
        return []
    return [
        "The verified results do not agree, so passing your tests does not settle which is"
        f" right. {decide()}\n" + question.render()
    ]


def _head(quoted: str, documents: Sequence[Document], yours: str, tested: bool) -> str:
    verified = [d for d in documents if is_verified(_verdict(d))]
    if verified:
        sources = sorted({str(_verdict(d).get("spec_source")) for d in verified})
        against = " or ".join(_THEIR.get(source, yours) for source in sources)
        head = f"{len(verified)} result(s) for {quoted} ran and passed {against}."
        if _OWN & set(sources):
            head += (
                " Code verified only against its own tests was not checked against what you"
                " need: call this tool again with your tests to check it."
            )
        return head
    lives = [
        f"[{number}] `{where}`"
        for number, document in enumerate(documents, start=1)
        if lacks_context(_verdict(document))
        and (where := where_it_lives(document.metadata)) is not None
    ]
    if lives:
        return (
            f"Nothing could be verified for {quoted}, but the codebase has code that may do it"
            " which could not run in the sandbox for want of its module or a package: "
            + "; ".join(lives)
            + ". Import it from there rather than writing it again, and test it where it lives."
        )
    tried = " or ".join(
        _THEIR.get(source, yours)
        for source in sorted({str(_verdict(d).get("spec_source", "none")) for d in documents})
        if source != "none"
    )
    return (
        f"Nothing could be verified for {quoted}: no retrieved code ran and passed "
        f"{tried or 'any tests (none were available)'}. Do not use unverified code as a"
        " solution; write the function yourself"
        + ("." if tested else " or call this tool again with tests.")
    )


def _verdict(document: Document) -> Mapping[str, Any]:
    verdict = document.metadata.get(METADATA_KEY)
    return verdict if isinstance(verdict, Mapping) else {}


def _block(number: int, document: Document, yours: str) -> str:
    verdict = _verdict(document)
    meta = document.metadata
    label = describe(verdict, meta, query_tests=yours)
    if not is_verified(verdict) and not lacks_context(verdict):
        label += "; do not rely on it without testing it"
    where = location(meta)
    title = f"[{number}] {label}" + (f" - {where}" if where else "")
    code = clean(document.page_content.rstrip(), CODE_LIMIT)
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(code)), default=0))
    return f"{title}\n{fence}python\n{code}\n{fence}"
