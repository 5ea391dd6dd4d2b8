"""Single-line AST mutations of a canonical function, one named bug type per edit.

`find_edits` walks the entry-point function of a canonical (its body, minus the docstring, type
annotations and f-strings) and lists every candidate edit of the six bug types below. Each edit
rewrites exactly one source line: the line's text is spliced at the AST node's byte offsets, so
every other line (formatting, comments, docstring) stays byte-identical to the canonical.

The six bug types partition the edits; no edit belongs to two of them:

``off_by_one``
    a value off by one: an integer literal ``n`` -> ``n + 1`` / ``n - 1`` (in ``x + 1`` the
    constant moves, and ``x + 1`` -> ``x`` when it would reach 0), an index ``a[i]`` ->
    ``a[i + 1]`` / ``a[i - 1]``, and ``len(x)`` -> ``len(x) + 1`` / ``len(x) - 1``; never inside
    a ``range()`` argument or a slice bound, which are boundaries.
``off_by_one_boundary``
    where an iteration or a slice starts or stops, or whether the boundary value is included: the
    start/stop arguments of ``range()`` and the lower/upper bounds of a slice shifted by one, and
    a comparison's strictness flipped with its direction kept (``<`` <-> ``<=``, ``>`` <-> ``>=``).
``swap_arguments``
    two adjacent positional arguments of a call swapped (``f(a, b)`` -> ``f(b, a)``), or the
    operands of a non-commutative binary operator (``a - b`` -> ``b - a``; also ``/ // % **
    << >>``).
``remove_edge_case_check``
    an ``if`` guard without ``else`` whose body ends in ``return`` or ``raise`` stops guarding.
    A guard written on one line (``if not xs: return 0``) loses that line; a guard whose body is
    on the following lines (or a one-line guard that is alone in its block, where deleting it
    would leave an empty block) keeps its lines and has its condition replaced by ``False``
    (``if not xs:`` -> ``if False:``). Either way exactly one line differs from the canonical.
``wrong_comparison``
    a comparison's direction reversed or its sense negated: ``==`` <-> ``!=``, ``<`` -> ``>`` /
    ``>=``, ``<=`` -> ``>=`` / ``>`` (and mirrored), ``in`` <-> ``not in``, ``is`` <-> ``is not``.
    The strictness-only flip belongs to ``off_by_one_boundary``.
``wrong_operator``
    an arithmetic, bitwise or boolean operator replaced: ``+`` <-> ``-``, ``*`` -> ``//`` / ``+``,
    ``/`` -> ``*`` / ``//``, ``//`` -> ``*`` / ``/``, ``%`` -> ``//``, ``**`` -> ``*``, ``<<`` <->
    ``>>``, ``&`` <-> ``|``, ``^`` -> ``|``, ``and`` <-> ``or``, and the same in augmented
    assignments (``+=`` -> ``-=``).

Turning edits into verified distractors is `guardrail_eval.mutations.select`.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["BugType", "Edit", "apply_edit", "changed_lines", "find_edits"]


class BugType(StrEnum):
    """The six bug types of the ExecRetrieval release; see the module docstring."""

    OFF_BY_ONE = "off_by_one"
    OFF_BY_ONE_BOUNDARY = "off_by_one_boundary"
    SWAP_ARGUMENTS = "swap_arguments"
    REMOVE_EDGE_CASE_CHECK = "remove_edge_case_check"
    WRONG_COMPARISON = "wrong_comparison"
    WRONG_OPERATOR = "wrong_operator"


@dataclass(frozen=True, slots=True)
class Edit:
    """One candidate single-line edit.

    Attributes:
        bug_type: which of the six bug types this edit makes.
        line: 1-based line number in the canonical.
        start: byte offset in the UTF-8 line where the replaced text starts (AST ``col_offset``).
        end: byte offset where it ends; ``start == end == -1`` deletes the whole line.
        replacement: the new text for ``[start, end)``.
        description: a short human-readable account (``"line 4: '<' -> '<='"``).
    """

    bug_type: BugType
    line: int
    start: int
    end: int
    replacement: str
    description: str

    @property
    def deletes_line(self) -> bool:
        return self.start == -1


def apply_edit(code: str, edit: Edit) -> str:
    """The canonical with ``edit`` applied; only line ``edit.line`` changes (or disappears)."""
    lines = code.split("\n")
    index = edit.line - 1
    if edit.deletes_line:
        return "\n".join(lines[:index] + lines[index + 1 :])
    raw = lines[index].encode("utf-8")
    new = raw[: edit.start] + edit.replacement.encode("utf-8") + raw[edit.end :]
    lines[index] = new.decode("utf-8")
    return "\n".join(lines)


def changed_lines(before: str, after: str) -> int:
    """How many lines differ between two texts (a replaced, deleted or inserted line each)."""
    matcher = difflib.SequenceMatcher(a=before.split("\n"), b=after.split("\n"), autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def find_edits(code: str, entry_point: str | None = None) -> dict[BugType, list[Edit]]:
    """Every candidate edit of ``code``, by bug type, in source order.

    Only the body of the top-level function ``entry_point`` is mutated (helpers stay intact);
    without an entry point, or when it is not a top-level function, every top-level function is.
    Raises `SyntaxError` when ``code`` does not parse.
    """
    module = ast.parse(code)
    functions = [
        node for node in module.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    chosen = [f for f in functions if f.name == entry_point] or functions
    finder = _EditFinder(code)
    for function in chosen:
        body = function.body
        if body and _is_docstring(body[0]):
            body = body[1:]
        finder.visit_block(body)
    return finder.edits


# --- operator tables -------------------------------------------------------------------------

_BOUNDARY_FLIP: dict[type[ast.cmpop], str] = {
    ast.Lt: "<=",
    ast.LtE: "<",
    ast.Gt: ">=",
    ast.GtE: ">",
}
_COMPARISON_SWAP: dict[type[ast.cmpop], tuple[str, ...]] = {
    ast.Eq: ("!=",),
    ast.NotEq: ("==",),
    ast.Lt: (">", ">="),
    ast.LtE: (">=", ">"),
    ast.Gt: ("<", "<="),
    ast.GtE: ("<=", "<"),
    ast.In: ("not in",),
    ast.NotIn: ("in",),
    ast.Is: ("is not",),
    ast.IsNot: ("is",),
}
_COMPARISON_TEXT = re.compile(r"==|!=|<=|>=|<|>|\bnot\s+in\b|\bis\s+not\b|\bin\b|\bis\b")
_BINOP_SYMBOL: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
}
_OPERATOR_SWAP: dict[str, tuple[str, ...]] = {
    "+": ("-",),
    "-": ("+",),
    "*": ("//", "+"),
    "/": ("*", "//"),
    "//": ("*", "/"),
    "%": ("//",),
    "**": ("*",),
    "<<": (">>",),
    ">>": ("<<",),
    "&": ("|",),
    "|": ("&",),
    "^": ("|",),
    "and": ("or",),
    "or": ("and",),
}
_NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)
# Operands that can stand next to a binary operator without parentheses.
_ATOMIC = (
    *(ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant),
    *(ast.List, ast.Tuple, ast.Dict, ast.Set),
    *(ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp),
)
_Located = ast.expr | ast.stmt
_SKIPPED_FIELDS = frozenset({"annotation", "returns", "type_comment", "decorator_list"})
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _binds_tighter_than_plus(node: ast.expr) -> bool:
    """Whether ``node`` can stand left of ``+ 1`` without parentheses and keep its meaning."""
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div | ast.FloorDiv | ast.Mod
                          | ast.Pow | ast.MatMult)  # fmt: skip
    if isinstance(node, ast.UnaryOp):
        return not isinstance(node.op, ast.Not)
    return isinstance(node, _ATOMIC)


def _is_int(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    )


def _is_negative_int(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _is_int(node.operand)


def _single_line(node: _Located) -> bool:
    return node.lineno == node.end_lineno


class _EditFinder:
    """Collects edits while walking statements; keeps the source lines as UTF-8 bytes."""

    def __init__(self, code: str) -> None:
        self.lines = [line.encode("utf-8") for line in code.split("\n")]
        self.edits: dict[BugType, list[Edit]] = {bug: [] for bug in BugType}
        self._boundary_nodes: set[int] = set()
        self._consumed: set[int] = set()

    # - walking -

    def visit_block(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self._guard(statement, body)
            for node in _walk(statement):
                self._visit(node)
            for block in _child_blocks(statement):
                self.visit_block(block)

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self._range_bounds(node)
            self._swap_call(node)
            self._length(node)
        elif isinstance(node, ast.Slice):
            self._slice_bounds(node)
        elif isinstance(node, ast.Compare):
            self._compare(node)
        elif isinstance(node, ast.BinOp):
            self._binop(node)
        elif isinstance(node, ast.BoolOp):
            self._boolop(node)
        elif isinstance(node, ast.AugAssign):
            self._augassign(node)
        elif isinstance(node, ast.Subscript):
            self._index(node)
        if isinstance(node, ast.Constant | ast.UnaryOp):
            self._constant(node)

    # - helpers -

    def _text(self, node: _Located) -> str:
        return self.lines[node.lineno - 1][node.col_offset : node.end_col_offset].decode("utf-8")

    def _add(self, bug: BugType, node: _Located, replacement: str) -> None:
        self._add_span(bug, node.lineno, node.col_offset, node.end_col_offset or 0, replacement)

    def _add_span(self, bug: BugType, line: int, start: int, end: int, replacement: str) -> None:
        old = self.lines[line - 1][start:end].decode("utf-8")
        if old == replacement:
            return
        description = f"line {line}: {old.strip()!r} -> {replacement.strip()!r}"
        self.edits[bug].append(Edit(bug, line, start, end, replacement, description))

    def _shifts(self, node: ast.expr) -> list[str]:
        """``node`` plus one and minus one, written as a programmer would."""
        if _is_int(node) or _is_negative_int(node):
            value = ast.literal_eval(node)
            return [str(value + 1), str(value - 1)]
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add | ast.Sub)
            and _is_int(node.right)
            and _single_line(node.left)
        ):
            # Keep the author's spacing: only the constant changes (or `+ 0` goes away).
            whole = self.lines[node.lineno - 1][node.col_offset : node.right.col_offset]
            value = ast.literal_eval(node.right)
            left = self._text(node.left)
            return [f"{whole.decode()}{v}" if v else left for v in (value + 1, value - 1)]
        text = self._text(node) if _binds_tighter_than_plus(node) else f"({self._text(node)})"
        return [f"{text} + 1", f"{text} - 1"]

    def _shift_edits(self, bug: BugType, node: ast.expr) -> None:
        if not _single_line(node):
            return
        for replacement in self._shifts(node):
            self._add(bug, node, replacement)
        # The constant this edit moves is not shifted again on its own.
        self._consumed.add(id(node))
        if isinstance(node, ast.BinOp):  # `len(x) - 1`: shifting len(x) too would repeat it
            self._consumed.update((id(node.right), id(node.left)))
        elif isinstance(node, ast.UnaryOp):
            self._consumed.add(id(node.operand))

    def _operator_gap(self, left: _Located, right: _Located) -> tuple[int, int, str] | None:
        """Line, start byte and text of what separates two operands on one line (the operator)."""
        if not (_single_line(left) and _single_line(right) and left.end_lineno == right.lineno):
            return None
        line = self.lines[right.lineno - 1]
        gap_start, gap_end = left.end_col_offset or 0, right.col_offset
        return right.lineno, gap_start, line[gap_start:gap_end].decode("utf-8")

    def _replace_operator(
        self, bug: BugType, left: _Located, right: _Located, pattern: re.Pattern[str], new: str
    ) -> None:
        gap = self._operator_gap(left, right)
        if gap is None:
            return
        line, gap_start, text = gap
        found = pattern.search(text)
        if found is None:
            return
        start = gap_start + len(text[: found.start()].encode("utf-8"))
        end = gap_start + len(text[: found.end()].encode("utf-8"))
        self._add_span(bug, line, start, end, new)

    # - the rules -

    def _range_bounds(self, node: ast.Call) -> None:
        if not (isinstance(node.func, ast.Name) and node.func.id == "range"):
            return
        bounds = node.args[:2] if len(node.args) >= 2 else node.args[:1]
        for bound in bounds:
            if not isinstance(bound, ast.Starred):
                self._boundary_nodes.update(id(inner) for inner in ast.walk(bound))
                self._shift_edits(BugType.OFF_BY_ONE_BOUNDARY, bound)

    def _slice_bounds(self, node: ast.Slice) -> None:
        for bound in (node.lower, node.upper):
            if bound is not None:
                self._boundary_nodes.update(id(inner) for inner in ast.walk(bound))
                self._shift_edits(BugType.OFF_BY_ONE_BOUNDARY, bound)

    def _compare(self, node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
            flip = _BOUNDARY_FLIP.get(type(op))
            if flip is not None:
                self._replace_operator(
                    BugType.OFF_BY_ONE_BOUNDARY, left, right, _COMPARISON_TEXT, flip
                )
            for new in _COMPARISON_SWAP.get(type(op), ()):
                self._replace_operator(BugType.WRONG_COMPARISON, left, right, _COMPARISON_TEXT, new)

    def _binop(self, node: ast.BinOp) -> None:
        symbol = _BINOP_SYMBOL.get(type(node.op))
        if symbol is None:
            return
        pattern = re.compile(re.escape(symbol) + (r"(?![*/])" if symbol in "*/" else ""))
        for new in _OPERATOR_SWAP.get(symbol, ()):
            self._replace_operator(BugType.WRONG_OPERATOR, node.left, node.right, pattern, new)
        if isinstance(node.op, _NON_COMMUTATIVE) and _single_line(node):
            gap = self._operator_gap(node.left, node.right)
            between = gap[2] if gap and not set(gap[2]) & set("()") else f" {symbol} "
            left, right = (self._operand(side) for side in (node.left, node.right))
            self._add(BugType.SWAP_ARGUMENTS, node, f"{right}{between}{left}")
        if (
            isinstance(node.op, ast.Add | ast.Sub)
            and _is_int(node.right)
            and id(node) not in self._boundary_nodes
        ):
            self._shift_edits(BugType.OFF_BY_ONE, node)

    def _operand(self, node: ast.expr) -> str:
        return self._text(node) if isinstance(node, _ATOMIC) else f"({self._text(node)})"

    def _boolop(self, node: ast.BoolOp) -> None:
        word = "and" if isinstance(node.op, ast.And) else "or"
        pattern = re.compile(rf"\b{word}\b")
        for left, right in itertools.pairwise(node.values):
            for new in _OPERATOR_SWAP[word]:
                self._replace_operator(BugType.WRONG_OPERATOR, left, right, pattern, new)

    def _augassign(self, node: ast.AugAssign) -> None:
        symbol = _BINOP_SYMBOL.get(type(node.op))
        if symbol is None:
            return
        pattern = re.compile(re.escape(symbol + "="))
        for new in _OPERATOR_SWAP.get(symbol, ()):
            self._replace_operator(
                BugType.WRONG_OPERATOR, node.target, node.value, pattern, new + "="
            )

    def _index(self, node: ast.Subscript) -> None:
        index = node.slice
        if (
            isinstance(index, ast.Slice | ast.Tuple | ast.Constant)
            or id(node) in self._boundary_nodes
            or (isinstance(index, ast.BinOp) and _is_int(index.right))
        ):
            return  # slices are boundaries; constants and `i + 1` are covered by their constant
        self._shift_edits(BugType.OFF_BY_ONE, index)

    def _constant(self, node: ast.Constant | ast.UnaryOp) -> None:
        if (_is_int(node) or _is_negative_int(node)) and id(node) not in (
            self._boundary_nodes | self._consumed
        ):
            self._shift_edits(BugType.OFF_BY_ONE, node)

    def _length(self, node: ast.Call) -> None:
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "len"
            and id(node) not in self._boundary_nodes | self._consumed
        ):
            self._shift_edits(BugType.OFF_BY_ONE, node)

    def _guard(self, node: ast.stmt, block: list[ast.stmt]) -> None:
        """remove_edge_case_check: see the module docstring for the one-line rule."""
        if not (isinstance(node, ast.If) and not node.orelse):
            return
        if not isinstance(node.body[-1], ast.Return | ast.Raise):
            return
        line = self.lines[node.lineno - 1]
        whole_line = line.strip() == line[node.col_offset : node.end_col_offset].strip()
        if _single_line(node) and whole_line and len(block) > 1:
            text = line.decode("utf-8").strip()
            description = f"line {node.lineno}: removed {text!r}"
            edit = Edit(BugType.REMOVE_EDGE_CASE_CHECK, node.lineno, -1, -1, "", description)
            self.edits[BugType.REMOVE_EDGE_CASE_CHECK].append(edit)
        elif _single_line(node.test) and node.test.lineno == node.lineno:
            self._add(BugType.REMOVE_EDGE_CASE_CHECK, node.test, "False")

    def _swap_call(self, node: ast.Call) -> None:
        arguments = node.args
        for first, second in itertools.pairwise(arguments):
            if isinstance(first, ast.Starred) or isinstance(second, ast.Starred):
                continue
            gap = self._operator_gap(first, second)
            if gap is None:
                continue
            line, _, between = gap
            swapped = f"{self._text(second)}{between}{self._text(first)}"
            end = second.end_col_offset or 0
            self._add_span(BugType.SWAP_ARGUMENTS, line, first.col_offset, end, swapped)


def _walk(statement: ast.stmt) -> Iterator[ast.AST]:
    """The statement's own expressions: no nested blocks, annotations or f-string internals."""
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.JoinedStr):
            continue
        children: list[ast.AST] = []
        for field, value in ast.iter_fields(node):
            if field in _SKIPPED_FIELDS or (field in _BLOCK_FIELDS and isinstance(value, list)):
                continue  # nested statement blocks are visited by `visit_block`
            if isinstance(value, ast.AST):
                children.append(value)
            elif isinstance(value, list):
                children.extend(item for item in value if isinstance(item, ast.AST))
        stack.extend(reversed(children))


def _child_blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(statement, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(statement, "handlers", []):
        yield handler.body
    for case in getattr(statement, "cases", []):
        yield case.body
