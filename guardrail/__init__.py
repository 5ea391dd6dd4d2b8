"""guardrail: retrieve-then-verify for coding agents.

Retrieved code is run against tests in a hardened Docker sandbox before an agent may act on it;
verified code is ranked first and code that failed is never handed over.

    >>> from guardrail import Gate, Spec
    >>> gate = Gate()                                     # doctest: +SKIP
    >>> spec = Spec.from_tests(["assert add(1, 2) == 3"])  # doctest: +SKIP
    >>> gate.verify(["def add(a, b):\\n    return a + b"], spec)[0].status  # doctest: +SKIP
    <Status.VERIFIED: 'verified'>
"""

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
