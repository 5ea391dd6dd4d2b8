"""`GuardedCodeSearchTool`: retrieve-then-verify as a tool an agent can call.

The agent passes a query and, ideally, the tests it wrote for the function it needs. The tool
answers with text an LLM can act on (`render_for_llm`: verified code first, each result labelled
with what it was judged against, a plain sentence when nothing could be verified, the import that
reaches a function that exists but could not run here; when every candidate that ran failed,
how many, the first failing test and what each returned, `guardrail.verdict_text.all_failed`)
and, as the tool message's artifact, the Documents with their verdicts: those handed over and,
when none is verified, those dropped because they ran and failed, errored or timed out.

Problems the LLM can fix or must know about do not end the agent's run: tests that do not parse,
that call no function, or that are too large, and a sandbox or index that does not answer, raise
`ToolException`, which ``handle_tool_error`` (on by default) turns into the tool's message.
Nothing is labelled VERIFIED without having run and passed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForToolRun,
    CallbackManagerForToolRun,
)
from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.v1 import ValidationError as ValidationErrorV1

from guardrail.errors import SpecError, UnavailableError
from guardrail.integration import METADATA_KEY, collecting_dropped
from guardrail.safetext import one_line
from guardrail.verdict_text import is_verified
from langchain_guardrail._tool_text import render_for_llm
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


def _bad_arguments(error: ValidationError | ValidationErrorV1) -> str:
    """What the LLM is told when its arguments do not fit `GuardedCodeSearchInput`."""
    problems = "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
        for item in error.errors()
    )
    return one_line(
        f"The arguments do not fit this tool: {problems}. Give 'query' as a string and 'tests'"
        " as a list of strings, each one assert statement.",
        1_000,
    )


class GuardedCodeSearchTool(BaseTool):
    """Search code and return only what ran and passed the tests (see `GuardedRetriever`).

    Returns ``(content, artifact)``: ``content`` is text for the LLM, ``artifact`` the list of
    Documents with their verdicts under ``metadata["guardrail"]``: the ones the retriever handed
    over and, when none of them is verified, then the ones its gate dropped for failing (status
    ``failed``, ``error`` or ``timeout``), which the text never offers as code to use.
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
    handle_tool_error: bool | str | Callable[[ToolException], str] | None = True
    """On by default: bad tests and an unavailable sandbox or index become the tool's message
    instead of an exception that ends the agent's run."""
    handle_validation_error: (
        bool | str | Callable[[ValidationError | ValidationErrorV1], str] | None
    ) = _bad_arguments
    """On by default: arguments that do not fit the schema become a message naming them."""

    def _run(
        self,
        query: str,
        tests: list[str] | None = None,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[Document]]:
        config: RunnableConfig = {"callbacks": run_manager.get_child() if run_manager else None}
        try:
            with collecting_dropped() as dropped:
                documents = self.retriever.invoke(query, config, **_tests_kwarg(tests))
        except (SpecError, UnavailableError) as exc:
            raise _tool_exception(exc, self.name) from exc
        return _answer(query, documents, dropped, tests)

    async def _arun(
        self,
        query: str,
        tests: list[str] | None = None,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[Document]]:
        config: RunnableConfig = {"callbacks": run_manager.get_child() if run_manager else None}
        try:
            with collecting_dropped() as dropped:
                documents = await self.retriever.ainvoke(query, config, **_tests_kwarg(tests))
        except (SpecError, UnavailableError) as exc:
            raise _tool_exception(exc, self.name) from exc
        return _answer(query, documents, dropped, tests)


def _answer(
    query: str, documents: list[Document], dropped: list[Document], tests: list[str] | None
) -> tuple[str, list[Document]]:
    if any(is_verified(d.metadata.get(METADATA_KEY) or {}) for d in documents):
        dropped = []  # verified code answers the call; what failed beside it is not news
    text = render_for_llm(query, documents, tests=tests, dropped=dropped)
    return text, [*documents, *dropped]


def _tool_exception(exc: SpecError | UnavailableError, tool: str) -> ToolException:
    """What the LLM is told instead of an exception that would end the agent's run."""
    problem = one_line(str(exc), 1_000)
    if isinstance(exc, SpecError):
        return ToolException(
            f"Your tests could not be used, so nothing ran: {problem}. Fix them and call {tool}"
            " again (a list of Python statements, each an assert that calls the function you"
            " need by name; at most 256 KiB in all), or call it without tests."
        )
    hint = f" ({one_line(exc.hint)})" if exc.hint else ""
    return ToolException(
        f"Code search is unavailable, so no code could be run or verified: {problem}{hint}."
        " Do not present retrieved or remembered code as verified; tell the user the sandbox"
        " or index must be started, or write the function yourself and say it is untested."
    )


def _tests_kwarg(tests: list[str] | None) -> dict[str, Any]:
    return {} if tests is None else {"tests": tests}
