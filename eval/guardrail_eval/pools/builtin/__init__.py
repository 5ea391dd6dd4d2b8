"""The built-in pool: hand-written tasks in ``tasks/<domain>.py`` and the generated ``data/``.

Each ``tasks/<domain>.py`` module defines ``TASKS: list[dict]`` with the keys of `TaskSource`
(``id``, ``domain``, ``query``, ``entry_point``, ``code``, ``tests``, optional ``setup``).
`load_task_sources` imports every such module and validates every entry; a bad entry is a
`FileFormatError` naming the module file and the line of the entry (or of the offending key).
``data/`` holds the pool built from them by `guardrail_eval.build.build_builtin_pool`.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guardrail_eval.errors import FileFormatError, describe_validation_error, format_location
from guardrail_eval.pool import Pool, load_pool
from guardrail_eval.pools import TaskSource

__all__ = ["DATA_DIR", "MIN_TESTS", "TASKS_PACKAGE", "load_builtin_pool", "load_task_sources"]

TASKS_PACKAGE = "guardrail_eval.pools.builtin.tasks"
DATA_DIR = Path(str(resources.files(__name__) / "data"))
MIN_TESTS = 5


def load_builtin_pool() -> Pool:
    """The shipped built-in pool (``data/``), named ``builtin``.

    Raises:
        PoolFormatError: the data files are missing or malformed (rebuild them with
            ``guardrail_eval.build.build_builtin_pool``).
    """
    return load_pool(DATA_DIR, name="builtin")


def load_task_sources(package: str = TASKS_PACKAGE) -> list[TaskSource]:
    """Every task of every ``<package>.<domain>`` module, validated, in module then list order.

    Checks beyond `TaskSource`'s own: ``TASKS`` is a list of dicts, each task has at least
    `MIN_TESTS` tests, and ids are unique across modules.
    """
    root = importlib.import_module(package)
    tasks: list[TaskSource] = []
    seen: dict[str, Path] = {}
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        path = Path(module.__file__ or info.name)
        for index, task in enumerate(_module_tasks(module, path)):
            where = _Locator(path, index)
            if len(task.tests) < MIN_TESTS:
                raise where.error(
                    "tests", f"{len(task.tests)} tests; a built-in task needs at least {MIN_TESTS}"
                )
            if task.id in seen:
                raise where.error(
                    "id", f"{task.id!r} is already the id of a task in {seen[task.id]}"
                )
            seen[task.id] = path
            tasks.append(task)
    return tasks


def _module_tasks(module: Any, path: Path) -> list[TaskSource]:
    raw = getattr(module, "TASKS", None)
    if not isinstance(raw, list):
        raise FileFormatError(path, None, "TASKS", "expected a module-level list of task dicts")
    tasks: list[TaskSource] = []
    for index, entry in enumerate(raw):
        where = _Locator(path, index)
        if not isinstance(entry, Mapping):
            raise where.error("", f"expected a dict, got {type(entry).__name__}")
        try:
            tasks.append(TaskSource.model_validate(dict(entry)))
        except ValidationError as exc:
            location, problem = describe_validation_error(exc)
            if not location:  # a whole-task problem: the message says it, not the dict
                problem = str(exc.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
            key = str(location[0]) if location else ""
            raise where.error(format_location(location), problem, key=key) from None
    return tasks


class _Locator:
    """Finds the source line of ``TASKS[index]`` (or of one of its keys) for error messages."""

    def __init__(self, path: Path, index: int) -> None:
        self.path = path
        self.index = index

    def error(self, field: str, problem: str, *, key: str | None = None) -> FileFormatError:
        name = f"TASKS[{self.index}]" + (f".{field}" if field else "")
        return FileFormatError(
            self.path, self._line(key if key is not None else field), name, problem
        )

    def _line(self, key: str) -> int | None:
        try:
            module = ast.parse(self.path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            return None
        for node in module.body:
            targets: list[ast.expr] = []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            elif isinstance(node, ast.Assign):
                targets = node.targets
            value = getattr(node, "value", None)
            if not any(isinstance(t, ast.Name) and t.id == "TASKS" for t in targets):
                continue
            if not isinstance(value, ast.List) or self.index >= len(value.elts):
                return node.lineno
            entry = value.elts[self.index]
            if isinstance(entry, ast.Dict):
                for dict_key, dict_value in zip(entry.keys, entry.values, strict=True):
                    if isinstance(dict_key, ast.Constant) and dict_key.value == key:
                        return dict_value.lineno
            return entry.lineno
        return None
