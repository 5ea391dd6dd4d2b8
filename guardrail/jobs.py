"""Turn a candidate (code, spec, metadata) into a sandbox `Job`, or into a verdict reached
without running it: its module context cannot be had (``missing_context``), or the tests' name
cannot be bound safely (``missing_entry_point``). Used by the `Gate` only."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardrail.binding import plan_binding
from guardrail.context import (
    MissingContextError,
    ModuleReads,
    build_job_context,
    context_digest,
    context_from_metadata,
)
from guardrail.precheck import MAX_PARSE_BYTES, capped_size
from guardrail.sandbox.base import Job
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict

__all__ = ["PreparedJob", "prepare_job"]


@dataclass(frozen=True, slots=True)
class PreparedJob:
    """A job to run, the alias the host chose for it, and the digest of what it carries besides
    code and spec (context payload and binding; None for a plain self-contained job)."""

    job: Job
    alias: str | None
    digest: str | None


def prepare_job(  # noqa: PLR0917 - the gate's settings, passed on
    code: str,
    spec: Spec,
    metadata: Mapping[str, Any] | None,
    context_root: str | Path | None = None,
    context_roots: Iterable[str | Path] = (),
    reads: ModuleReads | None = None,
) -> PreparedJob | Verdict:
    """The job for ``code``, with its module context from ``metadata`` (see
    `guardrail.context`; a stored root is read only inside a context root, `guardrail.roots`)
    and the host's binding plan (`guardrail.binding`); or the verdict. ``reads`` shares the
    modules read between the candidates of one call."""
    payload: dict[str, Any] | None = None
    qualified_name = ""
    try:
        context = context_from_metadata(metadata or {}, context_root, context_roots)
        if capped_size(code, MAX_PARSE_BYTES) > MAX_PARSE_BYTES:
            return _unparsed_job(code, spec, has_context=context is not None)
        if context is not None:
            payload = build_job_context(code, context, reads)
            qualified_name = context.qualified_name
    except MissingContextError as exc:
        return Verdict.unjudged(Status.UNVERIFIABLE, Reason.MISSING_CONTEXT, str(exc))
    if payload is None and _relative_import(code):
        return Verdict.unjudged(
            Status.UNVERIFIABLE,
            Reason.MISSING_CONTEXT,
            "the candidate imports relatively (from .x import y) and came without its module"
            " context (file, module, root in its metadata; see guardrail.context_metadata)",
        )
    module_source = None if payload is None else payload["modules"][payload["module"]]["source"]
    package = None if payload is None else str(payload["module"]).split(".")[0]
    plan = plan_binding(
        code,
        spec,
        qualified_name=qualified_name,
        module_source=module_source,
        package=package,
        module=None if payload is None else str(payload["module"]),
    )
    if plan.bind is None and plan.lacks_context:
        return Verdict.unjudged(Status.UNVERIFIABLE, Reason.MISSING_CONTEXT, plan.refusal)
    if plan.bind is None:
        return Verdict.unjudged(Status.ERROR, Reason.MISSING_ENTRY_POINT, plan.refusal)
    plain = payload is None and plan.alias is None
    digest = None if plain else context_digest({"context": payload, "bind": plan.bind})
    return PreparedJob(Job(code, spec, context=payload, bind=plan.bind), plan.alias, digest)


def _unparsed_job(code: str, spec: Spec, *, has_context: bool) -> PreparedJob | Verdict:
    """Code too large for the host to parse (`guardrail.precheck`): judged in the sandbox as it
    is, under the tests' own name (no alias: that needs its syntax tree); placing it in its
    module needs the tree too, so with a context it cannot be judged there."""
    if has_context:
        return Verdict.unjudged(
            Status.UNVERIFIABLE,
            Reason.MISSING_CONTEXT,
            f"the candidate is over {MAX_PARSE_BYTES:,} bytes, too large for the host to place in"
            " its module",
        )
    return PreparedJob(Job(code, spec), None, None)


def _relative_import(code: str) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and node.level > 0 for node in ast.walk(ast.parse(code))
    )
