"""The report's captions: what each arm is, with the facts of the pool shown they rest on."""

from __future__ import annotations

from guardrail_eval.structural import STRUCTURAL_CAPTION
from guardrail_eval.summary_models import Summary

__all__ = ["arm_captions"]


def arm_captions(summary: Summary) -> list[str]:
    """What each arm is, with the facts about the pool shown that the captions rest on."""
    near = summary.pool.near_clones
    shape = (
        f"In this pool {near.n_near} of {near.n_distractors} paired distractors"
        f" ({near.share:.1%}) are near clones of their canonical ({near.rule}; median"
        f" {near.median_edits:g} token edits), and that is what the centre exploits."
        if near is not None and near.share is not None
        else "This pool has no paired distractors to measure that shape on."
    )
    wrong = f"{summary.settings.noisy_share:.0%}"
    return [
        "ungated: the retriever's own ranking; the agent acts on its rank 1.",
        f"{STRUCTURAL_CAPTION} {shape}",
        "upper bound: the gate seeing every test. Its verdicts are the ground truth, so its"
        " exec@1 equals the ungated exec@k at k = fetch_k by construction: a ceiling, not a"
        " result.",
        "visibleN: the gate seeing N tests drawn at random per query (the hidden rest still"
        " decide what counts as correct): the honest measure of a gate when tests are thin.",
        "visibleN+consensus: the same gate with nobody to answer: among the candidates that pass"
        " the visible tests, the largest cluster that agrees on every probe input the gate ran"
        " goes first (MBR-exec, Shi et al. 2022; CodeT, Chen et al. 2022). A result: a deployed"
        " agent has it.",
        "visibleN+agree: the same gate under the agree policy: when the candidates that pass the"
        " visible tests disagree on any probe input, nothing is handed over (the agent is asked"
        " instead); it acts only when they agree, so all its buggy code is silent buggy. A"
        " result.",
        f"visibleN+noisy-askQ: the gate may ask up to Q questions, answered by a noisy answerer"
        f" (the canonical's answer, except {wrong} of the questions, seeded, get another answer"
        " the candidates gave). A result, as good as the answerer is. Its gate cost is measured"
        " after the oracle arm's runs, so the verdict cache answers the rounds the two share:"
        " a lower bound of what an agent pays.",
        "visibleN+oracle-askQ: the same, answered by an oracle (the pool's canonical run on the"
        " question's input): an UPPER BOUND on a careful user, not a result.",
        "No question asks a hidden test's input (it would hand the gate a test of the ground"
        " truth); 'hidden-test question' counts where the gate's own question was one."
        " Silent buggy: acted on buggy code although the gate raised no question in the last"
        " round.",
    ]
