"""Retrieve-then-verify with LangChain: the agent writes tests first and uses only verified code.

The codebase holds a helper and two copy-pasted variants of it with a one-line bug each: the
near-clones an embedding search cannot tell apart (here the search ranks a buggy one first). A
scripted chat model plays the LLM: it writes tests for the function it needs and calls the guarded
code search tool with them. The agent then adopts only code the gate verified, and says so when
there is none.

Runs offline: an in-memory Chroma index, the bundled MiniLM embedding, the Docker sandbox
(run `scripts/docker-up` first). Only the LLM is scripted.

    .venv/bin/python examples/langchain_retrieve_then_verify.py
"""

from __future__ import annotations

import sys

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from guardrail import Gate, Spec
from guardrail.index import CodeIndex, Snippet, minilm_embedding
from langchain_guardrail import GuardedCodeSearchTool, GuardedRetriever, verdict_of

TASK = "convert a CamelCase identifier to snake_case"

CAMEL_TO_SNAKE = '''def camel_to_snake(name):
    """Convert a CamelCase identifier to snake_case."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
'''

# (file, qualified name, code): the helper, two buggy copies of it, and unrelated neighbours.
CODEBASE = [
    ("text/case.py", "camel_to_snake", CAMEL_TO_SNAKE),
    ("legacy/naming.py", "camel_to_snake", CAMEL_TO_SNAKE.replace("i > 0", "i >= 0")),
    ("scripts/rename.py", "camel_to_snake", CAMEL_TO_SNAKE.replace("(ch.lower())", "(ch)")),
    (
        "text/case.py",
        "snake_to_camel",
        "def snake_to_camel(name):\n"
        '    """Convert a snake_case identifier to CamelCase."""\n'
        '    return "".join(part.title() for part in name.split("_"))\n',
    ),
    (
        "text/words.py",
        "word_count",
        "def word_count(text):\n"
        '    """Count the words in a text."""\n'
        "    return len(text.split())\n",
    ),
]

# What the scripted LLM "writes": tests first, then a tool call carrying them.
TESTS = [
    "assert camel_to_snake('CamelCase') == 'camel_case'",
    "assert camel_to_snake('parseJsonData') == 'parse_json_data'",
    "assert camel_to_snake('already') == 'already'",
]


def scripted_llm() -> GenericFakeChatModel:
    tool_call = {
        "name": "guarded_code_search",
        "args": {"query": TASK, "tests": TESTS},
        "id": "call-1",
        "type": "tool_call",
    }
    return GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(
                    content="I wrote tests for it; searching for verified code.",
                    tool_calls=[tool_call],
                ),
                AIMessage(content="I will reuse the verified camel_to_snake."),
            ]
        )
    )


def build_index() -> CodeIndex:
    index = CodeIndex(
        "example-retrieve-then-verify", embedding_function=minilm_embedding(), ephemeral=True
    )
    index.add(
        Snippet(
            code=code,
            entry_point=name,
            qualified_name=name,
            file=file,
            start_line=1,
            end_line=code.count("\n"),
        )
        for file, name, code in CODEBASE
    )
    return index


def main() -> int:
    index = build_index()
    with Gate(cache=False) as gate:
        tool = GuardedCodeSearchTool(
            retriever=GuardedRetriever(base=index, gate=gate, policy="filter", k=1)
        )
        llm = scripted_llm()
        messages: list[BaseMessage] = [HumanMessage(content=f"I need a function to {TASK}.")]
        ai = llm.invoke(messages)
        assert isinstance(ai, AIMessage)
        messages.append(ai)
        for call in ai.tool_calls:
            result = tool.invoke({**call, "type": "tool_call"})
            assert isinstance(result, ToolMessage)
            messages.append(result)
        print(f"agent: {ai.content}\n  tests: {TESTS}\n")
        print(f"tool:\n{messages[-1].content}\n")

        # The agent adopts only what the gate verified.
        found = messages[-1].artifact if isinstance(messages[-1], ToolMessage) else []
        verified = [d for d in found if (v := verdict_of(d)) is not None and v.verified]
        if not verified:
            print("agent: nothing could be verified, so I will write the function myself.")
            return 1
        chosen = verified[0]
        print(f"agent adopts: {chosen.metadata['file']}:{chosen.metadata['qualified_name']}")
        print(f"agent: {llm.invoke(messages).content}")

        # What the agent would have used without the gate.
        top = index.search(TASK, k=1)[0]
        verdict = gate.verify([top.code], Spec.from_tests(TESTS))[0]
        failed = ", ".join(verdict.failed_tests) or "none"
        print(
            f"without the gate: {top.metadata['file']}:{top.metadata['qualified_name']} "
            f"ranked first; it is {verdict.status.value} (failing: {failed})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
