"""The headline of one system: the gate's honest arms beside the best shortcut, and apart from
them the upper bounds.

The headline shows only arms a deployed agent can really have (`guardrail_eval.arms.HONEST_KINDS`:
the gate with its visible tests, its consensus, agree, a noisy answerer): ungated -> visible N ->
consensus -> agree -> noisy-ask1, then the structural picker and the best shortcut (`guardrail_eval.
shortcuts`) with an exact sign test of it against the gate's best honest arm, query by query.
The oracle arms and the gate with all tests are upper bounds: they go on a line of their own
(`Headline.upper_bounds`), labelled so, never in the headline.

Both are wrapped at `WIDTH` columns between segments, never inside one, so an arrow never
splits from the arm it points to (`wrap_segments`).
"""

from __future__ import annotations

from collections.abc import Sequence

from guardrail_eval.arms import HONEST_KINDS, ArmKind
from guardrail_eval.shortcuts import ShortcutBaselines
from guardrail_eval.stats import SignTest
from guardrail_eval.summary_models import ArmSummary, Headline, ShortcutComparison

__all__ = ["WIDTH", "best_honest", "headline", "wrap_segments"]

WIDTH = 80
"""The headline's columns (a terminal's default width)."""
INDENT = "  "
_HONEST = {kind.value for kind in HONEST_KINDS}


def wrap_segments(first: str, segments: Sequence[tuple[str, str]], width: int = WIDTH) -> str:
    """``first`` and each ``(separator, text)`` on lines of at most ``width`` columns where the
    segments allow: a line breaks only before a segment, which then starts its own line
    (indented; an arrow separator leads it, a ``;`` ends the line before). A segment longer
    than a line is never cut."""
    lines = [first]
    for separator, text in segments:
        joined = lines[-1] + separator + text
        if len(joined) <= width:
            lines[-1] = joined
            continue
        mark = separator.strip()
        if mark in {"->", "<-"}:
            lines.append(f"{INDENT}{mark} {text}")
        else:
            lines[-1] += mark
            lines.append(INDENT + text)
    return "\n".join(lines)


def best_honest(arms: Sequence[ArmSummary]) -> ArmSummary | None:
    """The gate's honest arm that acts on correct code most often (the first of equals)."""
    honest = [arm for arm in arms if arm.kind in _HONEST]
    return max(honest, key=lambda arm: arm.agent.correct, default=None)


def _shares(arm: ArmSummary, system: str) -> str:
    label = "ungated" if arm.kind == ArmKind.UNGATED else arm.name.removeprefix(system + "+")
    label = label.replace("upper-bound", "all tests")
    text = f"{label} {arm.agent.correct:.1%} / {arm.agent.buggy:.1%} / {arm.agent.nothing:.1%}"
    if arm.asking is not None:
        text += f" (silent buggy {arm.asking.silent_buggy.estimate:.1%})"
    return text


def headline(
    arms: Sequence[ArmSummary],
    shortcuts: ShortcutBaselines,
    test: SignTest | None,
) -> Headline:
    """The system's headline; ``test`` is the sign test of `best_honest` against the best
    shortcut (None when the system has no honest arm)."""
    system = arms[0].system
    by_kind: dict[str, list[ArmSummary]] = {}
    for arm in arms:
        by_kind.setdefault(arm.kind, []).append(arm)
    visible = by_kind.get(ArmKind.VISIBLE.value, [])[:1]
    setting = visible[0].visible_tests if visible else None

    def first_of(kind: ArmKind, questions: int | None = None) -> list[ArmSummary]:
        found = [
            arm
            for arm in by_kind.get(kind.value, [])
            if arm.visible_tests == setting and (questions is None or arm.questions == questions)
        ]
        return found[:1]

    chain = [
        *by_kind.get(ArmKind.UNGATED.value, []),
        *visible,
        *first_of(ArmKind.CONSENSUS),
        *first_of(ArmKind.AGREE),
        *first_of(ArmKind.NOISY_ASK, 1),
    ]
    structural = by_kind.get(ArmKind.STRUCTURAL.value, [])
    segments = [(" " if i == 0 else " -> ", _shares(arm, system)) for i, arm in enumerate(chain)]
    segments += [("; ", f"{_shares(arm, system)} (runs no code)") for arm in structural]
    best = best_honest(arms)
    share = shortcuts.best_exec_at_1
    segments.append(("; ", f"best shortcut {shortcuts.best} {share:.1%} acted on correct"))
    wins, comparison = None, None
    if best is not None and test is not None:
        wins = share >= best.agent.correct
        gate = f"{best.name.removeprefix(system + '+')} {best.agent.correct:.1%}"
        verdict = "the shortcut WINS over the gate" if wins else "below the gate's"
        segments.append((": " if wins else ", ", f"{verdict} {gate}"))
        segments.append((" ", f"(sign test p = {test.p_value:.3g})"))
        comparison = ShortcutComparison(
            gate_arm=best.name,
            shortcut=shortcuts.best,
            gate_correct=best.agent.correct,
            shortcut_correct=share,
            gate_higher=test.a_higher,
            shortcut_higher=test.b_higher,
            ties=test.ties,
            p_value=test.p_value,
        )
    first = f"{system}: acted on correct / acted on buggy / got nothing:"
    bounds = [
        arm for arm in arms if arm.role == "upper bound" and arm.visible_tests in {setting, "all"}
    ]
    upper = wrap_segments(
        f"{system} upper bounds (they know the answers; not results):",
        [(" " if i == 0 else "; ", _shares(arm, system)) for i, arm in enumerate(bounds)],
    )
    shown = [*chain, *structural]
    return Headline(
        system=system,
        arms=[arm.name for arm in shown],
        correct=[arm.agent.correct for arm in shown],
        buggy=[arm.agent.buggy for arm in shown],
        nothing=[arm.agent.nothing for arm in shown],
        text=wrap_segments(first, segments),
        upper_bounds=upper if bounds else None,
        shortcuts=shortcuts,
        shortcut_wins=wins,
        versus_shortcut=comparison,
    )
