"""`audit_index` / `audit_snippets`: clusters, then differential runs, then one `AuditReport`."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guardrail.audit.clusters import ClusterSettings, Embedder, find_clusters
from guardrail.audit.findings import AuditCounts, AuditReport
from guardrail.gate import Gate

if TYPE_CHECKING:  # chromadb (through the index) loads in half a second: only when used
    from guardrail.index.code_index import CodeIndex
    from guardrail.index.snippet import Snippet

__all__ = ["EMBED_BATCH", "AuditProgress", "audit_index", "audit_snippets", "embedder"]

EMBED_BATCH = 256  # texts per call of the embedding function, as `CodeIndex` writes them

AuditProgress = Callable[[str, int, int], None]
"""Called as ``hook(phase, done, total)``; phases: ``signatures``, ``embedding``, ``clusters``."""


def embedder(
    function: Callable[[list[str]], Sequence[Any]],
    on_progress: Callable[[int, int], None] | None = None,
) -> Embedder:
    """An `Embedder` over a Chroma embedding function (``--embedding``): the snippets' code, as
    `CodeIndex` embeds it (the same vectors, so the same cosine thresholds), shortest first
    (`embedding_order`: little padding), `EMBED_BATCH` texts per call."""

    def embed(snippets: Sequence[Snippet]) -> dict[str, list[float]]:
        from guardrail.index.code_index import embedding_order

        ordered = embedding_order(snippets)
        found: dict[str, list[float]] = {}
        for start in range(0, len(ordered), EMBED_BATCH):
            batch = ordered[start : start + EMBED_BATCH]
            vectors = function([snippet.code for snippet in batch])
            for snippet, vector in zip(batch, vectors, strict=True):
                found[snippet.index_id] = [float(x) for x in vector]
            if on_progress is not None:
                on_progress(start + len(batch), len(ordered))
        return found

    return embed


def audit_index(
    index: CodeIndex,
    gate: Gate,
    *,
    under: Path | None = None,
    settings: ClusterSettings | None = None,
    inputs: int = 40,
    seed: int = 0,
    target: str | None = None,
    on_progress: AuditProgress | None = None,
) -> AuditReport:
    """Audit the snippets of ``index`` (those whose file is under ``under``, when given).

    Raises:
        SandboxError: the sandbox cannot run anything.
        CodeIndexError: the index cannot be read.
    """
    started = time.perf_counter()
    snippets = list(index.snippets())
    if under is not None:
        folder = under.resolve()
        snippets = [s for s in snippets if _is_under(Path(s.path), folder)]
    vectors = index.embeddings([s.index_id for s in snippets])
    read = round(time.perf_counter() - started, 3)
    report = audit_snippets(
        snippets,
        vectors,
        gate,
        settings=settings,
        inputs=inputs,
        seed=seed,
        target=target or index.name,
        on_progress=on_progress,
    )
    return report.model_copy(update={"seconds": {"read": read, **report.seconds}})


def audit_snippets(
    snippets: Sequence[Snippet],
    vectors: Mapping[str, Sequence[float]] | None,
    gate: Gate,
    *,
    settings: ClusterSettings | None = None,
    inputs: int = 40,
    seed: int = 0,
    target: str,
    on_progress: AuditProgress | None = None,
    embed: Embedder | None = None,
) -> AuditReport:
    """Audit ``snippets`` (split from a tree, or read from an index); ``vectors`` are their
    embeddings by index id, or None; ``embed`` computes the missing ones of the snippets in
    candidate pairs only (`find_clusters`). With neither, pairs are confirmed by token edit
    distance alone, and no embedding is ever computed.

    Raises:
        SandboxError: the sandbox cannot run anything.
    """
    from guardrail.audit.differential import run_differential

    read = time.perf_counter()

    def hook(phase: str) -> Callable[[int, int], None] | None:
        if on_progress is None:
            return None
        report = on_progress
        return lambda done, total: report(phase, done, total)

    clusters = find_clusters(
        snippets, vectors, settings, on_progress=hook("signatures"), embed=embed
    )
    clustered = time.perf_counter()
    result = run_differential(
        clusters.clusters, gate, inputs=inputs, seed=seed, on_progress=hook("clusters")
    )
    ran = time.perf_counter()
    findings = sorted(result.findings, key=lambda f: (-f.severity.rank, f.fingerprint))
    counts = AuditCounts(
        snippets=clusters.snippets,
        compared=clusters.compared,
        candidate_pairs=clusters.candidate_pairs,
        confirmed_pairs=clusters.confirmed_pairs,
        clusters=len(clusters.clusters),
        embedded=clusters.embedded,
        pairs_run=result.pairs_run,
        pairs_not_run=dict(sorted(result.pairs_not_run.items())),
        sandbox_runs=result.sandbox_runs,
        inputs_tried=result.inputs_tried,
    )
    seconds = {
        "cluster": round(clustered - read, 3),
        "run": round(ran - clustered, 3),
    }
    not_compared = sorted(
        result.not_compared, key=lambda n: (n.category, n.left.identity, n.right.identity)
    )
    return AuditReport(
        target=target,
        counts=counts,
        findings=tuple(findings),
        seconds=seconds,
        not_compared=tuple(not_compared),
    )


def _is_under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
