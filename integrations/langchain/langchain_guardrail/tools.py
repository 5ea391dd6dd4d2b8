"""`GuardedCodeSearchTool`: retrieve-then-verify as a tool an agent can call.

The agent passes a query and, ideally, the tests it wrote for the function it needs. The tool
answers with text an LLM can act on (verified code first, labelled, and a plain sentence when
nothing could be verified) and, as the tool message's artifact, the Documents with their verdicts.

Code, names, paths and messages in that text come from the index and from candidates: each is
one cleaned, capped line (`guardrail.safetext`), and code sits in a fence longer than any run of
backticks inside it, so a snippet cannot close its block and write a forged ``VERIFIED`` label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForToolRun,
    CallbackManagerForToolRun,
)
from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field

from guardrail.integration import METADATA_KEY
from guardrail.safetext import clean, one_line
from langchain_guardrail.retrievers import GuardedRetriever

__all__ = ["GuardedCodeSearchInput", "GuardedCodeSearchTool", "render_for_llm"]


class GuardedCodeSearchInput(BaseModel):
    """Arguments of the guarded code search tool."""

    query: str = Field(description="What the code should do, in plain words.")
    tests: list[str] | None = Field(
        default=None,
        description=(
            "Test statements the code must pass, each a Python assert calling the function, "
            "e.g. \"assert slugify('Hello World') == 'hello-world'\". Without tests only code "
            "with tests stored in the index can be verified."
        ),
    )


class GuardedCodeSearchTool(BaseTool):
    """Search code and return only what ran and passed the tests (see `GuardedRetriever`).

    Returns ``(content, artifact)``: ``content`` is text for the LLM, ``artifact`` the list of
    Documents with their verdicts under ``metadata["guardrail"]``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str = "guarded_code_search"
    description: str = (
        "Find existing Python code for a task and verify it by running it against tests in a "
        "sandbox. Pass the tests you wrote for the function (assert statements) so that only "
        "code that passes them is returned. Use only code marked VERIFIED."
    )
    args_schema: type[BaseModel] = GuardedCodeSearchInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    retriever: GuardedRetriever
    """The gated retriever the tool calls."""

    def _run(
        self,
        query: str,
        tests: list[str] | None = None,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[Document]]:
        config: RunnableConfig = {"callbacks": run_manager.get_child() if run_manager else None}
        documents = self.retriever.invoke(query, config, **_tests_kwarg(tests))
        return render_for_llm(query, documents, tests=tests), documents

    async def _arun(
        self,
        query: str,
        tests: list[str] | None = None,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[Document]]:
        config: RunnableConfig = {"callbacks": run_manager.get_child() if run_manager else None}
        documents = await self.retriever.ainvoke(query, config, **_tests_kwarg(tests))
        return render_for_llm(query, documents, tests=tests), documents


def render_for_llm(
    query: str, documents: Sequence[Document], *, tests: Sequence[str] | None = None
) -> str:
    """Gated documents as text for an LLM: each labelled VERIFIED or UNVERIFIED, verified first.

    When no document is verified the text says so in its first sentence, so that an agent does
    not mistake untested code for a solution.
    """
    verified = [d for d in documents if _status(d) == "verified"]
    against = "your tests" if tests else _tests_named_by(documents)
    quoted = one_line(repr(query))
    if verified:
        head = f"{len(verified)} result(s) for {quoted} ran and passed {against}."
    else:
        head = (
            f"Nothing could be verified for {quoted}: no retrieved code ran and passed "
            f"{against}. Do not use unverified code as a solution; write the function yourself"
            + ("." if tests else " or call this tool again with tests.")
        )
    blocks = [head, *(_block(number, d) for number, d in enumerate(documents, start=1))]
    return "\n\n".join(blocks)


_SOURCE_WORDS = {
    "query": "the retriever's tests",
    "provider": "the tests the retriever's test provider gave",
    "stored": "the tests stored with the code",
    "doctest": "the examples in the code's docstrings",
}


def _tests_named_by(documents: Sequence[Document]) -> str:
    """What the verdicts were judged against, from their ``spec_source``."""
    sources = {
        str((d.metadata.get(METADATA_KEY) or {}).get("spec_source", "none")) for d in documents
    }
    words = [_SOURCE_WORDS[source] for source in sorted(sources) if source in _SOURCE_WORDS]
    return " or ".join(words) or "any tests (none were available)"


def _tests_kwarg(tests: list[str] | None) -> dict[str, Any]:
    return {} if tests is None else {"tests": tests}


def _status(document: Document) -> str:
    verdict = document.metadata.get(METADATA_KEY) or {}
    return str(verdict.get("status", "unverifiable"))


def _block(number: int, document: Document) -> str:
    verdict: dict[str, Any] = document.metadata.get(METADATA_KEY) or {}
    meta = document.metadata
    where = str(meta.get("qualified_name") or meta.get("entry_point") or "")
    if meta.get("file"):
        lines = f":{meta['start_line']}-{meta['end_line']}" if meta.get("start_line") else ""
        where = f"{where} ({meta['file']}{lines})" if where else f"{meta['file']}{lines}"
    if _status(document) == "verified":
        passed = len(verdict.get("passed_tests", []))
        label = f"VERIFIED: passed {passed}/{passed} tests"
        if verdict.get("alias"):
            label += f" (function {one_line(repr(verdict['alias']))} called as the tested name)"
    else:
        reason = one_line(str(verdict.get("message") or "no tests could run"))
        label = f"UNVERIFIED ({reason}); do not rely on it without testing it"
    title = f"[{number}] {label}" + (f" - {one_line(where)}" if where else "")
    code = clean(document.page_content.rstrip(), CODE_LIMIT)
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(code)), default=0))
    return f"{title}\n{fence}python\n{code}\n{fence}"


CODE_LIMIT = 100_000
"""Characters of one snippet's code shown to the LLM; longer code ends in a visible marker."""
_BACKTICKS = re.compile("`+")
