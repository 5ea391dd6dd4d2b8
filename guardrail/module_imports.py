"""What a module's text says, worked out once per text: its imports, and its syntax tree.

`guardrail.context` follows the imports of every module it ships, for every candidate of every
query; parsing and walking the same files again each time cost more than the rest of a warm
search together (68 ms a candidate on toolz). The answer depends only on the module's text and
the package it is in, so it is cached under a digest of that text: an edited file is a new
key, never a stale answer, and a file the tree hands over twice is parsed once. The cache is
bounded (`CACHE_ENTRIES` answers, each a short tuple of names) and safe to share between
threads (a service's requests).

`parsed_module` keeps the syntax trees of the last module texts read (up to `TREE_SOURCE_BYTES`
of text: a tree takes some 30 times its text), so the candidates of one module substitute into
one parse of it. Those trees are shared: callers read them and never change them.
"""

from __future__ import annotations

import ast
import hashlib
import threading
from collections import OrderedDict

from guardrail.precheck import parse
from guardrail.tree import MAX_SOURCE_BYTES

__all__ = ["CACHE_ENTRIES", "TREE_SOURCE_BYTES", "imported_module", "imports_of", "parsed_module"]

CACHE_ENTRIES = 8192
"""Module texts whose imports are remembered (least recently used ones are forgotten)."""

TREE_SOURCE_BYTES = 4 * 1024 * 1024
"""Characters of module text whose syntax trees `parsed_module` keeps, all trees together."""

_cache: OrderedDict[tuple[bytes, str], tuple[str, ...]] = OrderedDict()
_trees: OrderedDict[bytes, tuple[ast.Module, int]] = OrderedDict()
_lock = threading.Lock()


def _digest(source: str) -> bytes:
    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=20).digest()


def parsed_module(source: str) -> ast.Module:
    """`guardrail.precheck.parse` of ``source``, shared with every caller of the same text:
    read the tree, never change it. Raises `SyntaxError` as ``parse`` does (not remembered)."""
    key = _digest(source)
    with _lock:
        kept = _trees.get(key)
        if kept is not None:
            _trees.move_to_end(key)
            return kept[0]
    tree = parse(source)
    if len(source) <= TREE_SOURCE_BYTES // 4:  # one huge module never pushes out the rest
        with _lock:
            _trees[key] = (tree, len(source))
            while sum(size for _, size in _trees.values()) > TREE_SOURCE_BYTES:
                _trees.popitem(last=False)
    return tree


def imports_of(source: str, package: str) -> tuple[str, ...]:
    """Dotted names the imports of module text ``source`` in ``package`` may load (anywhere in
    it: lazy imports count); none for text that does not parse or is over `MAX_SOURCE_BYTES`
    (it fails in the sandbox as it would in the package, and is never parsed on the host)."""
    if len(source) > MAX_SOURCE_BYTES:
        return ()
    key = (_digest(source), package)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    found = _parse_imports(source, package)
    with _lock:
        _cache[key] = found
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return found


def _parse_imports(source: str, package: str) -> tuple[str, ...]:
    try:
        tree = parse(source)  # exhausting the parser is a SyntaxError there
    except SyntaxError:
        return ()
    wanted: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = imported_module(node, package)
            if base is None:
                continue
            if base:
                wanted.append(base)
            wanted.extend(f"{base}.{a.name}" if base else a.name for a in node.names)
    return tuple(w for w in wanted if w and "*" not in w)


def imported_module(node: ast.ImportFrom, package: str) -> str | None:
    """The absolute dotted module a ``from`` import in ``package`` names (``""`` for ``from .
    import x`` at the top level), None for a relative import climbing above the top package."""
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts):
        return None
    anchor = ".".join(parts[: len(parts) - (node.level - 1)])
    return ".".join(p for p in (anchor, node.module or "") if p)
