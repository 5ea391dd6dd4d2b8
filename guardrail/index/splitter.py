"""Split Python source into function- and method-level `Snippet`s.

Every function and method becomes a snippet (``Class.method`` for methods, nested classes
included); functions defined inside other functions stay part of their outer function, and
``@overload`` stubs are left out. A snippet's line range covers its decorators.

A snippet's code is the function's source, dedented, preceded by the module-level imports it uses
(``import re`` for a function calling ``re.sub``), so that it reads on its own. Each snippet also
records where it lives (``file`` relative to ``root``, ``module``; `guardrail.context`): the gate
judges it inside that module, so helpers, constants and relative imports resolve as in the package.

Doctest examples in a function's or method's docstring become the snippet's tests (see
`guardrail.index.doctests`). A method is judged in its class, in its module: its examples build
an instance (``>>> p = peekable([1, 2])``) and must reach the method (``p.peek()``, see
`guardrail.reach`), else it gets no tests. A method snippet's entry point is what its examples
call first (the class, or a module factory); one without tests keeps its own name. A docstring
the module assigns after the definition (``f.__doc__ = ...``, a text or another function's
docstring, of this module or another of the tree) counts as the function's own
(`guardrail.index.docstring_sources`).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict

from guardrail.context import context_metadata
from guardrail.errors import InputError, SpecError
from guardrail.index.docstring_sources import ModuleNames, TreeDocstrings
from guardrail.index.doctests import REASONS, DoctestTests, doctest_tests
from guardrail.index.errors import SourceFileError
from guardrail.index.paths import PathFilter
from guardrail.index.snippet import Snippet
from guardrail.precheck import capped_size
from guardrail.roots import register_context_root
from guardrail.safetext import clean, one_line
from guardrail.spec import infer_entry_point
from guardrail.tree import (
    MAX_SOURCE_BYTES,
    DirChoice,
    TreeEntry,
    TreeFileError,
    TreeSkip,
    read_in_tree,
    tree_root,
    walk_tree,
)

__all__ = [
    "SKIPPED_DIRECTORIES",
    "SkipReport",
    "SkippedFile",
    "TreeSplit",
    "split_python_file",
    "split_python_source",
    "split_tree",
]

SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules", "site-packages", "venv"})
"""Directory names `split_tree` never enters (besides hidden ones such as ``.venv`` or ``.git``)."""

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_BUILTINS = frozenset(dir(builtins))
_LIMIT_REASONS = frozenset({"too_many_examples", "unencodable"})  # listed as function skips


class SkippedFile(BaseModel):
    """A file (or one function of a file) `split_tree` could not use, and why: ``kind`` is the
    reason as one word (a `guardrail.tree.TreeSkip`, or ``syntax_error``, ``too_complex``,
    ``not_utf8``, ``bad_name``, ``function``), ``reason`` says it in full."""

    model_config = ConfigDict(frozen=True)

    file: str
    reason: str
    line: int | None = None
    kind: str = "syntax_error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.reason}"


class SkipReport(BaseModel):
    """Every file skipped by `split_tree`, in walking order."""

    model_config = ConfigDict(frozen=True)

    files: tuple[SkippedFile, ...] = ()
    functions: tuple[SkippedFile, ...] = ()
    """Functions left out of files that were read (or kept without their tests)."""

    @property
    def count(self) -> int:
        """How many files were skipped (functions not counted)."""
        return len(self.files)

    def by_kind(self) -> dict[str, int]:
        """How many files were skipped for each ``kind``, most common first."""
        return dict(Counter(skipped.kind for skipped in self.files).most_common())


class TreeSplit(BaseModel):
    """The snippets of every readable file (a file without functions maps to ``[]``)."""

    model_config = ConfigDict(frozen=True)

    files: dict[str, list[Snippet]]
    skipped: SkipReport = SkipReport()
    excluded: int = 0
    """Python files left out by the exclude globs and the test-file default (not read)."""
    root: str = ""
    """The folder walked (or the lone file), resolved: a context root (`guardrail.roots`)."""

    @property
    def snippets(self) -> list[Snippet]:
        return [snippet for snippets in self.files.values() for snippet in snippets]


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_python_source(
    source: str,
    file: str = "<source>",
    *,
    module: str = "",
    root: str = "",
    docstrings: TreeDocstrings | None = None,
    skipped: list[SkippedFile] | None = None,
) -> list[Snippet]:
    """Snippets of every function and method in ``source``, in source order; ``file``,
    ``module`` and ``root`` are stored with each (see `Snippet`). Docstrings copied from other
    modules are read from ``root`` (through ``docstrings``, a cache one tree's files share).

    One function that cannot be made a snippet (nesting the host cannot walk, stored tests that
    cannot be used) is left out, or kept without its tests, and listed in ``skipped`` when given.

    Raises:
        SourceFileError: the source is over `MAX_SOURCE_BYTES` or does not parse (with the line;
            ``kind`` ``too_complex`` for nesting that exhausts the parser).
    """
    tree = _parse(source, file)
    # Python breaks lines only at \n, \r\n and \r; str.splitlines also breaks at form feeds and
    # other separators, which would shift every later line number.
    lines = _LINE_BREAK.split(source)
    snippets: dict[str, Snippet] = {}
    package = module if PurePosixPath(file).name == "__init__.py" else module.rpartition(".")[0]
    names = ModuleNames.of(tree, module, package)
    tree_docstrings = docstrings or TreeDocstrings(root or None)
    assigned = tree_docstrings.assigned_in(names) if names.assigned else {}
    for node, qualified_name, in_class in _functions(tree.body, prefix="", in_class=False):
        docstring = ast.get_docstring(node) or ("" if in_class else assigned.get(node.name, ""))
        try:
            snippet = _snippet(
                node, qualified_name, lines, tree, file=file, in_class=in_class,
                docstring=docstring, skipped=skipped,
            )  # fmt: skip
        except (MemoryError, RecursionError, ValueError) as exc:  # one function, not the file
            _note(skipped, file, node, f"function {qualified_name} left out: {_why(exc)}")
            continue
        if module or root:
            snippet = snippet.model_copy(update={"module": module, "root": root})
        # The same definition twice (if/else branches) is one snippet: the first one stays.
        snippets.setdefault(snippet.content_id, snippet)
    return list(snippets.values())


def _parse(source: str, file: str) -> ast.Module:
    if capped_size(source, MAX_SOURCE_BYTES) > MAX_SOURCE_BYTES:
        raise SourceFileError(file, f"over {MAX_SOURCE_BYTES:,} bytes", kind=TreeSkip.TOO_LARGE)
    try:
        return ast.parse(source, filename=file)
    except SyntaxError as exc:
        raise SourceFileError(file, f"syntax error: {exc.msg}", line=exc.lineno) from None
    except (MemoryError, RecursionError) as exc:
        raise SourceFileError(file, _why(exc), kind="too_complex") from None
    except ValueError as exc:  # NUL bytes
        raise SourceFileError(file, f"not Python source: {exc}") from None


def _why(exc: BaseException) -> str:
    if isinstance(exc, MemoryError | RecursionError):
        return f"too deeply nested for the host to parse or walk ({type(exc).__name__})"
    return f"{type(exc).__name__}: {one_line(str(exc))}"


def _note(skipped: list[SkippedFile] | None, file: str, node: _Function, reason: str) -> None:
    if skipped is not None:
        skipped.append(SkippedFile(file=file, reason=reason, line=node.lineno, kind="function"))


def split_python_file(
    path: str | Path,
    *,
    docstrings: dict[str, TreeDocstrings] | None = None,
    skipped: list[SkippedFile] | None = None,
    boundary: str | Path | None = None,
) -> list[Snippet]:
    """`split_python_source` of a file; snippets name it by its module context
    (`guardrail.context.context_metadata`: the path relative to the folder above its outermost
    package, the dotted module, that folder), or by its path when it is no module.
    ``docstrings`` caches the tree's docstrings by root for the files of one tree; functions left
    out go to ``skipped``; docstrings copied from other modules are read only under ``boundary``
    (the indexed folder) when given. The file is read with `guardrail.tree.read_in_tree` under
    its sys.path folder: a link on the way (the file itself included) or a file that is not
    regular is refused.

    Raises:
        SourceFileError: the file cannot be read (``kind``: a `guardrail.tree.TreeSkip`), it or
            its name is not UTF-8, or it does not parse.
    """
    file = Path(os.path.abspath(path))
    if not str(file).isascii():
        try:  # a name that is not UTF-8 reaches Python as lone surrogates; no store can hold it
            str(file).encode("utf-8")
        except UnicodeEncodeError:
            raise SourceFileError(
                str(file), "the file name is not valid UTF-8", kind="bad_name"
            ) from None
    try:
        where: dict[str, str] | None = context_metadata(file)
    except InputError:  # a file name that is no import name (``my-script.py``)
        where = None
    root, relative = (where["root"], where["file"]) if where else (str(file.parent), file.name)
    source = _source(file, root, relative)
    if where is None:
        return split_python_source(source, str(file), skipped=skipped)
    within = ""  # the indexed folder, when the sys.path root is above it
    if boundary is not None and Path(boundary) != Path(root):
        with contextlib.suppress(ValueError):
            within = Path(boundary).relative_to(root).as_posix()
    made = TreeDocstrings(root, within=within)
    cache = None if docstrings is None else docstrings.setdefault(root, made)
    functions: list[SkippedFile] = []
    try:
        snippets = split_python_source(
            source, relative, module=where["module"], root=root, docstrings=cache, skipped=functions
        )
    except SourceFileError as exc:  # named by the path the user knows, not the relative one
        raise SourceFileError(str(file), exc.reason, line=exc.line, kind=exc.kind) from None
    if skipped is not None:
        skipped += [item.model_copy(update={"file": str(file)}) for item in functions]
    return snippets


def _source(file: Path, root: str, relative: str) -> str:
    try:
        data = read_in_tree(tree_root(root), relative)
    except TreeFileError as exc:
        raise SourceFileError(str(file), exc.reason, kind=exc.skip) from None
    try:
        return data.decode("utf-8-sig")  # a byte-order mark is valid Python source
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SourceFileError(str(file), "not UTF-8 text", line=line, kind="not_utf8") from None


def split_tree(
    path: str | Path, *, exclude: Iterable[str] = (), include_tests: bool = False
) -> TreeSplit:
    """Split every ``.py`` file under ``path`` (or ``path`` itself when it is a file).

    Hidden directories and `SKIPPED_DIRECTORIES` are not entered. Files and directories that
    match an ``exclude`` glob, and tests unless ``include_tests`` (see `guardrail.index.paths`
    for the glob rules and what counts as a test), are left out and counted. A ``path`` that is a
    file is split whatever its name. The tree is walked and read with `guardrail.tree` (its root
    resolved once, no link below it followed, regular files only, `MAX_DEPTH` folders deep, files
    up to `MAX_SOURCE_BYTES`): whatever cannot be read or parsed, and any function that cannot be
    split, is skipped and listed in the `SkipReport` with its reason; the other files still are.

    Raises:
        SourceFileError: ``path`` does not exist.
        TreeFileError: ``path`` is neither a regular file nor a folder (a FIFO, a device).
        InputError: an ``exclude`` glob is malformed.
    """
    given = Path(path)
    path_filter = PathFilter(exclude, include_tests=include_tests)
    if not given.exists():
        raise SourceFileError(str(given), "no such file or directory", kind=TreeSkip.MISSING)
    files: dict[str, list[Snippet]] = {}
    skipped: list[SkippedFile] = []
    functions: list[SkippedFile] = []
    docstrings: dict[str, TreeDocstrings] = {}
    excluded = 0
    # The key of a file is its real path: the root resolved once, the rest as walked (no links).
    root = Path(os.path.realpath(given.parent), given.name) if given.is_file() else tree_root(given)
    boundary = None if given.is_file() else root
    for entry in [None] if given.is_file() else _python_files(root, path_filter):
        if entry is not None and entry.excluded:
            excluded += 1
            continue
        if entry is not None and entry.skip is not None:
            skip = entry.skip
            skipped.append(
                SkippedFile(file=str(root / skip.relative), reason=skip.reason, kind=skip.skip)
            )
            continue
        file = root if entry is None else root / entry.relative
        try:
            snippets = split_python_file(
                file, docstrings=docstrings, skipped=functions, boundary=boundary
            )
        except SourceFileError as exc:
            skipped.append(
                SkippedFile(file=exc.file, reason=exc.reason, line=exc.line, kind=exc.kind)
            )
            continue
        except (MemoryError, RecursionError) as exc:  # past the parse: one file, not the run
            skipped.append(SkippedFile(file=str(file), reason=_why(exc), kind="too_complex"))
            continue
        files[str(file)] = snippets
    report = SkipReport(files=tuple(skipped), functions=tuple(functions))
    walked = register_context_root(root)  # the folder, or the lone file, the caller named
    return TreeSplit(files=files, skipped=report, excluded=excluded, root=str(walked))


def _python_files(root: Path, path_filter: PathFilter) -> Iterator[TreeEntry]:
    """The ``.py`` files under ``root`` in a stable order, those filtered out marked excluded."""

    def choose(relative: str) -> DirChoice:
        name = relative.rpartition("/")[2]
        if name.startswith(".") or name in SKIPPED_DIRECTORIES:
            return DirChoice.PRUNE
        return DirChoice.EXCLUDE if path_filter.excludes(relative, is_dir=True) else DirChoice.ENTER

    for entry in walk_tree(root, suffix=".py", choose=choose):
        if entry.skip is None and path_filter.excludes(entry.relative, is_dir=False):
            yield TreeEntry(entry.relative, excluded=True)
        else:
            yield entry


def _functions(
    body: list[ast.stmt], *, prefix: str, in_class: bool
) -> Iterator[tuple[_Function, str, bool]]:
    """Functions and methods in ``body``, also inside if/try/with blocks, not inside functions."""
    for node in body:
        if isinstance(node, _Function):
            if not any(_decorator_name(d) == "overload" for d in node.decorator_list):
                yield node, prefix + node.name, in_class
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node.body, prefix=f"{prefix}{node.name}.", in_class=True)
        else:
            for child in ast.iter_child_nodes(node):
                nested = child.body if isinstance(child, ast.ExceptHandler) else [child]
                statements = [n for n in nested if isinstance(n, ast.stmt)]
                yield from _functions(statements, prefix=prefix, in_class=in_class)


def _snippet(
    node: _Function,
    qualified_name: str,
    lines: list[str],
    module: ast.Module,
    *,
    file: str,
    in_class: bool,
    docstring: str,
    skipped: list[SkippedFile] | None = None,
) -> Snippet:
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    end = node.end_lineno or node.lineno
    indent = lines[start - 1][: len(lines[start - 1]) - len(lines[start - 1].lstrip())]
    body = "\n".join(line.removeprefix(indent) for line in lines[start - 1 : end])
    needed = _imports_used(node, _module_imports(module))
    code = "\n".join([*needed, "", "", body]) if needed else body
    method = qualified_name if in_class else None
    found = doctest_tests(docstring, node.name, method, module) if docstring else None
    for limit in sorted(_LIMIT_REASONS & set(found.reasons if found else ())):
        _note(skipped, file, node, f"the examples of {qualified_name} left out: {REASONS[limit]}")
    fields: dict[str, Any] = {
        "code": code + "\n",
        "qualified_name": qualified_name,
        "file": file,
        "start_line": start,
        "end_line": end,
        "docstring": _storable(docstring),
        "signature": _signature(node),
    }
    if found and found.tests:
        try:
            return Snippet(
                **fields,
                entry_point=_entry_point(node.name, method, found),
                tests=found.tests,
                setup=found.setup,
                extra={"tests_source": "doctest"},
            )
        except SpecError as exc:  # tests no spec takes (too many, too big): kept, untested
            _note(skipped, file, node, f"the tests of {qualified_name} left out: {exc}")
    return Snippet(**fields, entry_point=_entry_point(node.name, method, None))


def _storable(docstring: str) -> str:
    """The docstring as stored, embedded and shown: one with a lone surrogate (``"\\udc80"`` in
    the source), which no store or terminal takes, gets its unsafe characters escaped."""
    try:
        docstring.encode("utf-8")
    except UnicodeEncodeError:
        return clean(docstring, limit=len(docstring) * 6)
    return docstring


def _entry_point(name: str, method: str | None, found: DoctestTests | None) -> str:
    """What the stored tests call: the function; for a method with tests, what its examples
    call first (its class, ``peekable``, or a module factory), else its outermost class."""
    if method is None or not (found and found.tests):
        return name
    try:
        return infer_entry_point(found.tests, found.setup)
    except SpecError:  # the examples call only names they bind: they reach it through the class
        return method.split(".")[0]


def _signature(node: _Function) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _annotation_names(node: _Function) -> set[str]:
    arguments = node.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    annotations = [a.annotation for a in every if a.annotation is not None]
    annotations += [node.returns] if node.returns is not None else []
    return {
        name.id
        for annotation in annotations
        for name in ast.walk(annotation)
        if isinstance(name, ast.Name)
    }


def _module_imports(module: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Top-level absolute imports (relative ones cannot work outside their package)."""
    return [
        node
        for node in module.body
        if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.level == 0)
    ]


def _imports_used(node: _Function, imports: list[ast.Import | ast.ImportFrom]) -> list[str]:
    """The import statements (trimmed to the names used) that ``node`` needs, in module order."""
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    statements: list[str] = []
    future: list[ast.ImportFrom] = []
    for statement in imports:
        if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
            future.append(statement)
            continue
        aliases = [
            alias for alias in statement.names if (alias.asname or alias.name).split(".")[0] in used
        ]
        if aliases:
            trimmed: ast.Import | ast.ImportFrom = (
                ast.Import(names=aliases)
                if isinstance(statement, ast.Import)
                else ast.ImportFrom(module=statement.module, names=aliases, level=0)
            )
            statements.append(ast.unparse(trimmed))
    # The module's future imports change how annotations are evaluated; carry them only when
    # evaluating the annotations eagerly would fail (a name from elsewhere in the module).
    bound = {
        (alias.asname or alias.name).split(".")[0]
        for statement in imports
        for alias in statement.names
    }
    if future and not _annotation_names(node) <= bound | _BUILTINS:
        statements[:0] = [ast.unparse(statement) for statement in future]
    return statements
