"""Configuration is validated before anything runs: misspellings and bad values raise.

LangChain's `BaseRetriever` and `BaseDocumentCompressor` ignore unknown constructor arguments; ours
must not, or ``GuardedRetriever(base=..., gate=..., test=[...])`` would silently verify nothing.
The gate here runs over a sandbox that fails the test if it is ever asked to run anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from pydantic import ValidationError

import langchain_guardrail
from guardrail.errors import SpecError
from guardrail.gate import Gate, Policy
from guardrail.sandbox.base import Job, Sandbox
from guardrail.verdict import Verdict
from langchain_guardrail import ExecutionGateCompressor, GuardedCodeSearchTool, GuardedRetriever


class _MustNotRun(Sandbox):
    """A sandbox that proves validation happened first: running anything fails the test."""

    @property
    def identity(self) -> str:
        return "must-not-run"

    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        pytest.fail(f"the sandbox was asked to run {len(jobs)} job(s) before validation")


DOCS = [Document(page_content="def f(x):\n    return x\n")]


@pytest.fixture
def idle_gate() -> Gate:
    return Gate(_MustNotRun(), cache=False)


@pytest.fixture
def retriever(idle_gate: Gate) -> GuardedRetriever:
    return GuardedRetriever(base=RunnableLambda(lambda _query: DOCS), gate=idle_gate)


def test_public_api_is_pinned() -> None:
    assert langchain_guardrail.__all__ == [
        "METADATA_KEY",
        "ChromaEmbeddings",
        "ExecutionGateCompressor",
        "GuardedCodeSearchTool",
        "GuardedRetriever",
        "verdict_of",
    ]
    assert langchain_guardrail.METADATA_KEY == "guardrail"


def test_defaults(retriever: GuardedRetriever) -> None:
    assert (retriever.k, retriever.fetch_k) == (4, 20)
    assert retriever.policy is None and retriever.tests is None


@pytest.mark.parametrize("misspelt", ["test", "fetchk", "polcy", "entrypoint"])
def test_misspelt_constructor_argument_raises(idle_gate: Gate, misspelt: str) -> None:
    kwargs: dict[str, Any] = {misspelt: 1}
    with pytest.raises(ValidationError, match=misspelt):
        GuardedRetriever(base=RunnableLambda(lambda _q: DOCS), gate=idle_gate, **kwargs)


def test_misspelt_compressor_argument_raises(idle_gate: Gate) -> None:
    with pytest.raises(ValidationError, match="test_providr"):
        ExecutionGateCompressor(gate=idle_gate, test_providr=lambda q, d: None)  # type: ignore[call-arg]


def test_misspelt_tool_argument_raises(retriever: GuardedRetriever) -> None:
    with pytest.raises(ValidationError, match="retreiver"):
        GuardedCodeSearchTool(retriever=retriever, retreiver=retriever)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("k", 0, "greater than or equal to 1"),
        ("fetch_k", 2, "fetch_k=2 is smaller than k=4"),
        ("policy", "best", "rerank"),
        ("gate", object(), "Gate"),
        ("base", object(), "base"),
        ("tests", "assert f(1) == 1", "not one string"),
    ],
)
def test_bad_values_raise(idle_gate: Gate, field: str, value: object, message: str) -> None:
    params: dict[str, Any] = {"base": RunnableLambda(lambda _q: DOCS), "gate": idle_gate}
    with pytest.raises(ValidationError, match=message):
        GuardedRetriever(**{**params, field: value})


def test_policy_strings_become_policies(idle_gate: Gate) -> None:
    retriever = GuardedRetriever(
        base=RunnableLambda(lambda _q: DOCS), gate=idle_gate, policy="filter"
    )
    assert retriever.policy is Policy.FILTER


def test_unknown_invoke_keyword_raises_before_anything_runs(retriever: GuardedRetriever) -> None:
    with pytest.raises(TypeError, match=r"\['test'\]"):
        retriever.invoke("identity", test=["assert f(1) == 1"])


async def test_unknown_ainvoke_keyword_raises(retriever: GuardedRetriever) -> None:
    with pytest.raises(TypeError, match=r"\['top_k'\]"):
        await retriever.ainvoke("identity", top_k=3)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k": 0}, ValueError, "k must be a positive integer"),
        ({"fetch_k": "10"}, ValueError, "fetch_k must be a positive integer"),
        ({"policy": "best"}, ValueError, "best"),
        ({"tests": "assert f(1) == 1"}, TypeError, "wrap it in a list"),
        ({"tests": [1, 2]}, TypeError, "list of strings"),
    ],
)
def test_bad_call_options_raise(
    retriever: GuardedRetriever, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        retriever.invoke("identity", **kwargs)


def test_unparseable_tests_raise_spec_error_before_running(retriever: GuardedRetriever) -> None:
    with pytest.raises(SpecError, match="does not parse"):
        retriever.invoke("identity", tests=["assert f(1) =="])


def test_base_returning_non_documents_is_a_type_error(idle_gate: Gate) -> None:
    def strings(query: str) -> list[str]:
        return ["def f(): pass"]

    wrong: Any = RunnableLambda(strings)  # deliberately not a retriever of Documents
    retriever = GuardedRetriever(base=wrong, gate=idle_gate)
    with pytest.raises(TypeError, match="expected LangChain Documents"):
        retriever.invoke("anything")
