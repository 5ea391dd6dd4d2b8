"""`guardrail sandbox check`'s module-context probes: a hostile module of the indexed tree cannot
get a wrong retrieved text verified, and an honest one still verifies.

Each probe is a small package written to a temporary folder and judged through the real pipeline
(`guardrail.jobs.prepare_job`: the context shipped, the text substituted, the runner's checks of
`guardrail.sandbox.runner.retrieved`), so what is proved is what every judged snippet gets. The
retrieved text is always the module's own wrong ``sum_squares`` (0..n-1); each hostile module
then tries to have the tests call something correct instead. None may come back ``verified``;
the honest module with the right text must.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from guardrail.context import context_metadata
from guardrail.jobs import PreparedJob, prepare_job
from guardrail.sandbox.base import Sandbox
from guardrail.spec import Spec
from guardrail.verdict import Status, Verdict

__all__ = ["MODULE_PROBES", "module_context_checks"]

_WRONG = "def sum_squares(n):\n    return sum(i * i for i in range(n))\n"
_RIGHT = _WRONG.replace("range(n)", "range(n + 1)")
_CORRECT = "\n\ndef _correct(n):\n    return sum(i * i for i in range(n + 1))\n"
_SPEC = Spec.build(["assert sum_squares(3) == 14", "assert sum_squares(4) == 30"], "sum_squares")

MODULE_PROBES: dict[str, tuple[str, str, bool]] = {
    "a module that rebinds the tested name is not judged as the retrieved text": (
        _WRONG,
        _WRONG + _CORRECT + "\nsum_squares = _correct\n",
        False,
    ),
    "a module that swaps the definition's code is not judged as the retrieved text": (
        _WRONG,
        _WRONG + _CORRECT + "\nsum_squares.__code__ = _correct.__code__\n",
        False,
    ),
    "a module cannot switch the runner's checks off through sys.modules": (
        _WRONG,
        "import sys\n\n"
        + _WRONG
        + _CORRECT
        + "\nfor _name, _module in list(sys.modules.items()):\n"
        "    if _name.startswith('guardrail_runner'):\n"
        "        for _attribute in dir(_module):\n"
        "            if 'check' in _attribute or 'pin' in _attribute:\n"
        "                setattr(_module, _attribute, lambda *a, **k: None)\n"
        "sum_squares = _correct\n",
        False,
    ),
    "a correct definition in its own module verifies": (_RIGHT, _RIGHT + _CORRECT, True),
}
"""Property name -> (retrieved text, the module's source, whether it must verify)."""


def module_context_checks(sandbox: Sandbox) -> list[tuple[str, bool, str]]:
    """``(property, held, detail)`` for each of `MODULE_PROBES`, judged in ``sandbox``; a probe
    the host could not even prepare does not hold."""
    with tempfile.TemporaryDirectory(prefix="guardrail-check-") as folder:
        prepared: list[PreparedJob | Verdict] = []
        for number, (text, source, _) in enumerate(MODULE_PROBES.values()):
            package = Path(folder) / f"grprobe{number}"
            package.mkdir()
            (package / "__init__.py").write_text("")
            (package / "sums.py").write_text(source)
            metadata = {**context_metadata(package / "sums.py"), "qualified_name": "sum_squares"}
            prepared.append(prepare_job(text, _SPEC, metadata))
        ran = iter(sandbox.run([p.job for p in prepared if isinstance(p, PreparedJob)]))
        verdicts = [next(ran) if isinstance(p, PreparedJob) else p for p in prepared]
    checks = []
    for (name, (_, _, must_verify)), verdict in zip(MODULE_PROBES.items(), verdicts, strict=True):
        held = verdict.verified if must_verify else verdict.status is not Status.VERIFIED
        said = f"{verdict.status.value}/{verdict.reason.value}: {verdict.message}"[:300]
        checks.append((name, held, "" if held else said))
    return checks
