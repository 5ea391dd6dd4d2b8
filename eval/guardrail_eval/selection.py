"""What the eval's choices name: the pool (``builtin``, ``humaneval`` or a folder) and the systems.

`open_pool` and `build_systems` turn the CLI's ``--pool``, ``--system`` and ``--replay`` into a
loaded `Pool` and retrieval systems, checking everything before anything is embedded or run.
Importing this module is cheap (the CLI imports it at start); the heavy modules load on use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from guardrail.cache import default_cache_path
from guardrail_eval.errors import EvalSettingError

if TYPE_CHECKING:
    from guardrail.gate import Gate
    from guardrail_eval.pool import Pool
    from guardrail_eval.systems import RetrievalSystem

__all__ = [
    "BUILTIN",
    "HUMANEVAL",
    "SystemChoice",
    "build_systems",
    "default_index_dir",
    "open_pool",
    "pool_cache_root",
]

BUILTIN = "builtin"
HUMANEVAL = "humaneval"


class SystemChoice(StrEnum):
    """``--system``: which retrieval systems to run (``all`` = dense and BM25)."""

    DENSE = "dense"
    BM25 = "bm25"
    ALL = "all"


def pool_cache_root() -> Path:
    """Where built pools are cached: ``pools/`` beside the verdict cache."""
    return default_cache_path().parent / "pools"


def default_index_dir() -> Path:
    """Where the dense system keeps its Chroma index: ``eval-index/`` beside the verdict cache."""
    return default_cache_path().parent / "eval-index"


def open_pool(
    choice: str,
    gate: Gate,
    *,
    seed: int = 0,
    on_task: Callable[[int, int], None] | None = None,
) -> Pool:
    """The pool ``choice`` names: ``builtin``, ``humaneval`` (built once with ``gate``) or a DIR.

    Raises:
        PoolFormatError: a folder that is not a pool, or a malformed pool file.
        EvalSettingError: the built-in pool's data is missing from the installation.
    """
    from guardrail_eval.pool import load_pool

    if choice == BUILTIN:
        from guardrail_eval.pools.builtin import DATA_DIR

        if not DATA_DIR.is_dir():
            raise EvalSettingError(
                f"the built-in pool is not built ({DATA_DIR} is missing)",
                hint="build it with `guardrail eval build-pool builtin`",
            )
        return load_pool(DATA_DIR, name=BUILTIN)
    if choice == HUMANEVAL:
        from guardrail_eval.humaneval import load_humaneval_pool

        return load_humaneval_pool(gate, seed, cache_root=pool_cache_root(), on_task=on_task)
    return load_pool(Path(choice))


def build_systems(
    pool: Pool,
    choices: Sequence[SystemChoice],
    replays: Sequence[Path] = (),
    *,
    seed: int = 0,
    index_dir: Path | None = None,
) -> list[RetrievalSystem]:
    """The systems to compare, in order: dense, BM25, then each replay.

    ``index_dir`` is where the dense index lives; None keeps it in memory.

    Raises:
        ResultsFormatError: a replay file is malformed or does not match ``pool``.
        EvalSettingError: nothing to run, or two replays with the same name.
    """
    from guardrail_eval.systems import BM25System, DenseSystem, ReplaySystem

    wanted = set(choices)
    systems: list[RetrievalSystem] = []
    if wanted & {SystemChoice.DENSE, SystemChoice.ALL}:
        systems.append(DenseSystem(index_dir=index_dir, seed=seed))
    if wanted & {SystemChoice.BM25, SystemChoice.ALL}:
        systems.append(BM25System(seed=seed))
    systems += [ReplaySystem.load(path, pool) for path in replays]
    names = [system.name for system in systems]
    if not systems:
        raise EvalSettingError(
            "no retrieval system to evaluate", hint="give --system dense|bm25|all or --replay FILE"
        )
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise EvalSettingError(
            f"two systems would share the name {repeated[0]!r} (and their output files)",
            hint="rename one of the --replay files",
        )
    return systems
