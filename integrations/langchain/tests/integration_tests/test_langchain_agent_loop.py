"""`GuardedCodeSearchTool` inside a real LangChain agent loop (`AgentExecutor`).

The only stand-in is the chat model: LangChain's own `FakeMessagesListChatModel`, scripted to
call the tool with the tests an LLM might write (bad ones first, good ones last) and then answer.
Everything the tool calls is real: a `CodeIndex` (Chroma + offline MiniLM), the Docker gate, and
for the missing engine a sandbox pointed at a socket that does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_pool import CHUNK

from guardrail.gate import Gate
from guardrail.index import CodeIndex
from guardrail.sandbox.docker import DockerSandbox
from langchain_guardrail import GuardedCodeSearchTool, GuardedRetriever

FINAL_ANSWER = "I will use the verified chunk function."


class ScriptedChatModel(FakeMessagesListChatModel):
    """LangChain's fake chat model, accepting tools as a tool-calling agent binds them."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self


def _calls(*tests: list[str]) -> list[BaseMessage]:
    """One tool call per list of tests, then the final answer."""
    calls: list[BaseMessage] = [
        AIMessage(
            content="",
            tool_calls=[
                {
                    "name": "guarded_code_search",
                    "args": {"query": CHUNK.query, "tests": t},
                    "id": f"call-{n}",
                }
            ],
        )
        for n, t in enumerate(tests)
    ]
    return [*calls, AIMessage(content=FINAL_ANSWER)]


def _executor(tool: GuardedCodeSearchTool, script: list[BaseMessage]) -> AgentExecutor:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Find verified code with the tool."),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    )
    agent = create_tool_calling_agent(ScriptedChatModel(responses=script), [tool], prompt)
    return AgentExecutor(agent=agent, tools=[tool], return_intermediate_steps=True)


REQUEST = {"input": "I need a function that splits a list into chunks"}


def _run_agent(tool: GuardedCodeSearchTool, script: list[BaseMessage]) -> dict[str, Any]:
    return _executor(tool, script).invoke(REQUEST)


UNPARSEABLE = ["assert chunk([1, 2, 3], 2 == [[1, 2], [3]]"]
# Calls no function: without the refusal every candidate would be "verified" by it.
NO_ENTRY_POINT = ["assert [[1, 2], [3]] == [[1, 2], [3]]"]
TOO_LARGE = ["assert chunk([1], 1) == [[1]]  # " + "x" * 300_000]


@pytest.mark.docker
def test_agent_survives_bad_tests_and_gets_verified_code_with_good_ones(
    near_clone_index: CodeIndex, gate: Gate
) -> None:
    tool = GuardedCodeSearchTool(retriever=GuardedRetriever(base=near_clone_index, gate=gate))
    script = _calls(UNPARSEABLE, NO_ENTRY_POINT, TOO_LARGE, list(CHUNK.tests))

    result = _run_agent(tool, script)

    assert result["output"] == FINAL_ANSWER
    observations = [str(observation) for _, observation in result["intermediate_steps"]]
    assert len(observations) == 4
    problems = ["does not parse", "would pass for any code", "a spec may take at most 262,144"]
    for observation, problem in zip(observations, problems, strict=False):
        assert observation.startswith("Your tests could not be used, so nothing ran:")
        assert problem in observation
        assert "call guarded_code_search again" in observation
    assert "test 1 does not parse" in observations[0]
    good = observations[3]
    assert good.startswith(f"1 result(s) for {CHUNK.query!r} ran and passed your tests.")
    assert "[1] VERIFIED against your tests: passed 3/3 - chunk" in good


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_agent_is_told_when_the_docker_engine_is_missing(
    near_clone_index: CodeIndex, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A real sandbox whose engine socket does not exist: the agent is told, the run goes on."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    gate = Gate(DockerSandbox(pool_size=1), cache=False)
    try:
        tool = GuardedCodeSearchTool(retriever=GuardedRetriever(base=near_clone_index, gate=gate))
        executor = _executor(tool, _calls(list(CHUNK.tests)))
        if mode == "invoke":
            result = executor.invoke(REQUEST)
        else:
            result = await executor.ainvoke(REQUEST)
    finally:
        gate.close()

    assert result["output"] == FINAL_ANSWER
    [(_, observation)] = result["intermediate_steps"]
    assert str(observation).startswith(
        "Code search is unavailable, so no code could be run or verified: no Docker engine answers"
    )
    assert "sudo apt-get install docker.io" in str(observation)  # the hint: how to get one
    assert "Do not present retrieved or remembered code as verified" in str(observation)
