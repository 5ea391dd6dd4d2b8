"""Options that ``guardrail eval`` and ``guardrail audit retriever`` share: one definition each,
so the two commands cannot drift apart in name, default or help."""

from __future__ import annotations

from typing import Annotated

import typer

from guardrail.gate import Policy

__all__ = ["FetchKOption", "PolicyOption", "SeedOption", "VisibleTestsOption"]

VisibleTestsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--visible-tests",
        help="N random visible units per query the gate may see (a unit: a test with the earlier"
        " examples it needs; the hidden rest still decide what"
        " counts as correct): one visible<N> arm each. Repeatable. Default: 1. The gate"
        " with all tests (the upper bound) always runs.",
    ),
]
FetchKOption = Annotated[
    int, typer.Option("--fetch-k", help="How many top snippets the gate verifies.")
]
PolicyOption = Annotated[
    Policy,
    typer.Option(
        help="rerank: verified first, failed dropped; filter: verified only;"
        " abstain: nothing unless something verified; agree: as abstain, and nothing when"
        " the verified disagree on an input."
    ),
]
SeedOption = Annotated[
    int,
    typer.Option(
        min=0,
        help="Seed of the HumanEval pool's mutations, of tie-breaks and of visible-test draws.",
    ),
]
