"""The pinned sdists (`guardrail_eval.sdists`, shared with ``guardrail eval build-pool``), and
module names of their files.

The sdist's top folder is the sys.path root of the library (``more_itertools/`` sits in it), so
it is what gets indexed and what the ground-truth container puts on ``PYTHONPATH``.
"""

from __future__ import annotations

from pathlib import Path

from guardrail_eval.sdists import SDISTS, fetch

__all__ = ["SDISTS", "fetch", "module_of"]


def module_of(file: str, root: Path) -> str:
    """The dotted module name of ``file`` (absolute, or relative to ``root``)."""
    path = Path(file)
    relative = path.relative_to(root.resolve()) if path.is_absolute() else path
    parts = relative.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
