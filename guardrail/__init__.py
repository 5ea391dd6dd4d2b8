"""guardrail: retrieve-then-verify for coding agents.

Retrieved code is run against tests in a hardened Docker sandbox before an agent may act on it;
verified code is ranked first and code that failed is never handed over.

    >>> from guardrail import Gate, Spec
    >>> gate = Gate()                                     # doctest: +SKIP
    >>> spec = Spec.from_tests(["assert add(1, 2) == 3"])  # doctest: +SKIP
    >>> gate.verify(["def add(a, b):\\n    return a + b"], spec)[0].status  # doctest: +SKIP
    <Status.VERIFIED: 'verified'>
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what `__getattr__` imports on first use: a command-line client pays for none
    from guardrail.cache import VerdictCache
    from guardrail.context import CodeContext, MissingContextError, context_metadata
    from guardrail.errors import (
        CacheWarning,
        CandidateFileError,
        EngineUnavailableError,
        GuardrailError,
        ImageNotFoundError,
        ImageUnusableError,
        InputError,
        RuntimeNotFoundError,
        SandboxError,
        SpecError,
        UnavailableError,
    )
    from guardrail.gate import Candidate, Gate, GatedCandidate, GateResult, Policy, apply_policy
    from guardrail.probes import Probe, generate_probes
    from guardrail.questions import Answer, Observation, Question
    from guardrail.sandbox.base import Job, Sandbox
    from guardrail.sandbox.docker import DockerSandbox, SandboxLimits
    from guardrail.spec import Spec
    from guardrail.verdict import Reason, Status, TestOutcome, Verdict

_HOMES = {
    "Answer": "guardrail.questions",
    "CacheWarning": "guardrail.errors",
    "Candidate": "guardrail.gate",
    "CandidateFileError": "guardrail.errors",
    "CodeContext": "guardrail.context",
    "DockerSandbox": "guardrail.sandbox.docker",
    "EngineUnavailableError": "guardrail.errors",
    "Gate": "guardrail.gate",
    "GateResult": "guardrail.gate",
    "GatedCandidate": "guardrail.gate",
    "GuardrailError": "guardrail.errors",
    "ImageNotFoundError": "guardrail.errors",
    "ImageUnusableError": "guardrail.errors",
    "InputError": "guardrail.errors",
    "Job": "guardrail.sandbox.base",
    "MissingContextError": "guardrail.context",
    "Observation": "guardrail.questions",
    "Policy": "guardrail.gate",
    "Probe": "guardrail.probes",
    "Question": "guardrail.questions",
    "Reason": "guardrail.verdict",
    "RuntimeNotFoundError": "guardrail.errors",
    "Sandbox": "guardrail.sandbox.base",
    "SandboxError": "guardrail.errors",
    "SandboxLimits": "guardrail.sandbox.docker",
    "Spec": "guardrail.spec",
    "SpecError": "guardrail.errors",
    "Status": "guardrail.verdict",
    "TestOutcome": "guardrail.verdict",
    "UnavailableError": "guardrail.errors",
    "Verdict": "guardrail.verdict",
    "VerdictCache": "guardrail.cache",
    "apply_policy": "guardrail.gate",
    "context_metadata": "guardrail.context",
    "generate_probes": "guardrail.probes",
}
"""Where each public name lives: imported on first access (PEP 562), so ``import guardrail`` and
``import guardrail.client`` cost no sandbox, cache or numpy import."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'guardrail' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


__version__ = "0.1.0"

__all__ = [
    "Answer",
    "CacheWarning",
    "Candidate",
    "CandidateFileError",
    "CodeContext",
    "DockerSandbox",
    "EngineUnavailableError",
    "Gate",
    "GateResult",
    "GatedCandidate",
    "GuardrailError",
    "ImageNotFoundError",
    "ImageUnusableError",
    "InputError",
    "Job",
    "MissingContextError",
    "Observation",
    "Policy",
    "Probe",
    "Question",
    "Reason",
    "RuntimeNotFoundError",
    "Sandbox",
    "SandboxError",
    "SandboxLimits",
    "Spec",
    "SpecError",
    "Status",
    "TestOutcome",
    "UnavailableError",
    "Verdict",
    "VerdictCache",
    "apply_policy",
    "context_metadata",
    "generate_probes",
]
