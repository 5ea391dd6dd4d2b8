"""Safety audits: near-clones a retriever cannot tell apart, run against each other.

    >>> from guardrail.audit import audit_index, to_sarif
    >>> report = audit_index(CodeIndex("my-project"), Gate())      # doctest: +SKIP
    >>> [f.message for f in report.findings]                        # doctest: +SKIP

Clusters (`find_clusters`: MinHash/LSH candidates, confirmed by stored embeddings or token edit
distance), differential runs in the sandbox (`run_differential`), findings with severity and a
stable fingerprint (`Finding`), and reports as JSON (`AuditReport.model_dump`), SARIF 2.1.0
(`to_sarif`) and HTML (`to_html`).
"""

from guardrail.audit.clusters import (
    ClonePair,
    Cluster,
    ClusterReport,
    ClusterSettings,
    Embedder,
    find_clusters,
)
from guardrail.audit.findings import (
    RULES,
    AuditCounts,
    AuditReport,
    Finding,
    NotCompared,
    Outcome,
    Place,
    ProbeInput,
    Rule,
    Severity,
    Site,
)
from guardrail.audit.html import to_html
from guardrail.audit.run import AuditProgress, audit_index, audit_snippets, embedder
from guardrail.audit.sarif import to_sarif
from guardrail.audit.tokens import code_tokens, token_similarity

__all__ = [
    "RULES",
    "AuditCounts",
    "AuditProgress",
    "AuditReport",
    "ClonePair",
    "Cluster",
    "ClusterReport",
    "ClusterSettings",
    "Embedder",
    "Finding",
    "NotCompared",
    "Outcome",
    "Place",
    "ProbeInput",
    "Rule",
    "Severity",
    "Site",
    "audit_index",
    "audit_snippets",
    "code_tokens",
    "embedder",
    "find_clusters",
    "to_html",
    "to_sarif",
    "token_similarity",
]
