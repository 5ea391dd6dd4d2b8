"""The public API is pinned: what ``guardrail`` exports, and how its main entry points are called.

A change here is a change users see: it must be made on purpose (update the pin and say so in the
changelog), never as the side effect of moving a module. ``import guardrail`` itself loads its
names on first use (`guardrail.__getattr__`), so each is also checked to resolve.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import guardrail
import guardrail.client
import guardrail.index

EXPORTS = {
    "guardrail": [
        "Answer", "CacheWarning", "Candidate", "CandidateFileError", "CodeContext",
        "DockerSandbox", "EngineUnavailableError", "Gate", "GateResult", "GatedCandidate",
        "GuardrailError", "ImageNotFoundError", "ImageUnusableError", "InputError", "Job",
        "MissingContextError", "Observation", "Policy", "Probe", "Question", "Reason",
        "RuntimeNotFoundError", "Sandbox", "SandboxError", "SandboxLimits", "Spec", "SpecError",
        "Status", "TestOutcome", "UnavailableError", "Verdict", "VerdictCache", "apply_policy",
        "context_metadata", "generate_probes",
    ],
    "guardrail.client": ["RemoteGate", "RemoteInternalError", "SERVER_ENV_VAR"],
    "guardrail.index": [
        "AddReport", "ChromaUnavailableError", "CodeIndex", "CodeIndexError",
        "CollectionNameError", "DoctestTests", "EmbeddingModelError", "IndexNotFoundError",
        "ProgressHook", "SentenceTransformerEmbedding", "SkipReport", "SkippedFile", "Snippet",
        "SourceFileError", "StoredCheck", "TEST_GLOBS", "TreeSplit", "chroma_default_embedding",
        "decode_metadata", "default_index_path", "doctest_tests", "load_embedding",
        "minilm_embedding", "sentence_transformer_embedding", "split_python_file",
        "split_python_source", "split_tree", "stored_summary", "verify_stored",
    ],
}  # fmt: skip

CALLS: dict[Callable[..., Any], list[str]] = {
    guardrail.Gate.__init__: ["sandbox", "cache", "policy", "context_root", "context_roots",
                              "ask", "probe_limit"],
    guardrail.Gate.verify: ["codes", "spec", "metadata"],
    guardrail.Gate.averify: ["codes", "spec", "metadata"],
    guardrail.Gate.gate: ["candidates", "spec", "policy", "ask"],
    guardrail.Gate.agate: ["candidates", "spec", "policy", "ask"],
    guardrail.DockerSandbox.__init__: ["image", "client", "pool_size", "jobs_per_container",
                                       "limits", "timeout_s", "runtime"],
}  # fmt: skip


def test_each_module_exports_exactly_its_pinned_names_and_each_resolves() -> None:
    modules = {"guardrail": guardrail, "guardrail.client": guardrail.client,
               "guardrail.index": guardrail.index}  # fmt: skip
    for name, module in modules.items():
        assert sorted(module.__all__) == sorted(EXPORTS[name]), name
        for export in module.__all__:
            assert getattr(module, export) is not None, f"{name}.{export}"


def test_the_main_entry_points_keep_their_parameters() -> None:
    for function, parameters in CALLS.items():
        found = [p for p in inspect.signature(function).parameters if p != "self"]
        assert found == parameters, function.__qualname__


def test_a_remote_gate_offers_what_a_gate_offers() -> None:
    methods = ["verify", "averify", "gate", "agate", "observe", "aobserve", "close"]
    for method in methods:
        local = inspect.signature(getattr(guardrail.Gate, method)).parameters
        remote = inspect.signature(getattr(guardrail.client.RemoteGate, method)).parameters
        assert list(remote) == list(local), method
