"""The tool's text for an LLM names what the code was judged against."""

from __future__ import annotations

from langchain_core.documents import Document

from langchain_guardrail.tools import render_for_llm


def _document(status: str, source: str) -> Document:
    verdict = {"status": status, "spec_source": source, "passed_tests": ["assert f(1) == 1"]}
    return Document(page_content="def f(x):\n    return x\n", metadata={"guardrail": verdict})


def test_the_tests_given_to_the_tool_are_called_yours() -> None:
    text = render_for_llm("q", [_document("verified", "query")], tests=["assert f(1) == 1"])
    assert text.startswith("1 result(s) for 'q' ran and passed your tests.")


def test_tests_from_the_retriever_are_not_called_stored_tests() -> None:
    text = render_for_llm("q", [_document("verified", "query")])
    assert "ran and passed the retriever's tests." in text
    assert "stored" not in text.splitlines()[0]


def test_doctest_verdicts_say_so_and_nothing_verified_is_said_first() -> None:
    assert "the examples in the code's docstrings" in render_for_llm(
        "q", [_document("verified", "doctest")]
    )
    text = render_for_llm("q", [_document("unverifiable", "none")])
    assert text.startswith("Nothing could be verified for 'q'")
    assert "any tests (none were available)" in text
