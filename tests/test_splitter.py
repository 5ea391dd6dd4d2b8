"""Splitting Python source into function- and method-level snippets (no Chroma, no model)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from guardrail.index import (
    Snippet,
    SourceFileError,
    split_python_file,
    split_python_source,
    split_tree,
)

CODEBASE = Path(__file__).parent / "snippets" / "codebase"

SOURCE = textwrap.dedent(
    '''
    """A module."""
    from __future__ import annotations

    import os.path
    import re as regex
    from collections import Counter, OrderedDict
    from typing import overload

    from . import sibling


    def plain(a, b=2):
        """Add.

        >>> plain(1)
        3
        """
        def helper(x):
            return x
        return helper(a) + b


    @overload
    def typed(x: int) -> int: ...
    @overload
    def typed(x: str) -> str: ...
    def typed(x):
        return x


    class Outer:
        """A class."""

        @staticmethod
        @regex.compile
        def decorated(text: str) -> list[str]:
            """Words.

            >>> Outer.decorated("a b")
            ['a', 'b']
            """
            return regex.findall(r"\\w+", text)

        class Inner:
            async def fetch(self, *args, key=None, **kwargs) -> Outer:
                return os.path.join(*args)

        def counts(self):
            return Counter(sibling.items())


    if True:
        def conditional():
            return 1
    '''
)


@pytest.fixture(scope="module")
def by_name() -> dict[str, Snippet]:
    return {s.qualified_name: s for s in split_python_source(SOURCE, "mod.py")}


def test_every_function_and_method_with_qualified_names(by_name: dict[str, Snippet]) -> None:
    assert list(by_name) == [
        "plain",
        "typed",
        "Outer.decorated",
        "Outer.Inner.fetch",
        "Outer.counts",
        "conditional",
    ]  # nested `helper` stays inside `plain`; the two @overload stubs are left out


def test_line_ranges_include_decorators_and_code_is_dedented(by_name: dict[str, Snippet]) -> None:
    lines = SOURCE.splitlines()
    decorated = by_name["Outer.decorated"]
    assert lines[decorated.start_line - 1].strip() == "@staticmethod"
    assert lines[decorated.end_line - 1].strip().startswith("return regex.findall")
    assert decorated.code.splitlines()[-1] == '    return regex.findall(r"\\w+", text)'
    for snippet in by_name.values():
        ast.parse(snippet.code)  # every snippet stands alone as a module
        assert snippet.file == "mod.py"


def test_signature_docstring_and_entry_point(by_name: dict[str, Snippet]) -> None:
    fetch = by_name["Outer.Inner.fetch"]
    assert fetch.signature == "async def fetch(self, *args, key=None, **kwargs) -> Outer"
    assert fetch.entry_point == "fetch"
    assert by_name["plain"].signature == "def plain(a, b=2)"
    assert by_name["plain"].docstring.startswith("Add.\n\n>>> plain(1)")


def test_module_imports_the_function_uses_are_prepended_trimmed(
    by_name: dict[str, Snippet],
) -> None:
    # `-> Outer` would fail if evaluated outside the module: the future import comes along
    fetch_code = by_name["Outer.Inner.fetch"].code
    assert fetch_code.startswith("from __future__ import annotations\nimport os.path\n\n\n")
    # builtins and imported names evaluate fine: no future import
    assert by_name["Outer.decorated"].code.startswith("import re as regex\n\n\n@staticmethod")
    assert "Counter" not in fetch_code and "regex" not in fetch_code
    counts_code = by_name["Outer.counts"].code
    # only Counter (not OrderedDict); the relative import cannot work outside its package
    assert counts_code.startswith("from collections import Counter\n\n\ndef counts(self):")
    assert "sibling" not in counts_code.split("def counts")[0]
    # no annotations, no imports used: the function alone, no future import
    assert by_name["conditional"].code == "def conditional():\n    return 1\n"


def test_function_and_method_doctests_become_tests(by_name: dict[str, Snippet]) -> None:
    assert by_name["plain"].tests == ["__doctest_example__('plain(1)', '3')"]
    assert by_name["plain"].extra == {"tests_source": "doctest"}
    method = by_name["Outer.decorated"]  # judged in its class: the tests call the class
    assert method.tests == ["__doctest_example__('Outer.decorated(\"a b\")', \"['a', 'b']\")"]
    assert (method.entry_point, method.extra) == ("Outer", {"tests_source": "doctest"})


BOX = '''
class Box:
    def size(self):
        """>>> Box().other()
        1
        """

    def __len__(self):
        """>>> len(Box())
        0
        """

    def __reduce__(self):
        """>>> Box()
        <Box>
        """

    def _calc_n(self):
        """>>> Box().n
        0
        """

    n = property(_calc_n)
'''


def test_a_method_gets_tests_only_when_its_examples_reach_it() -> None:
    by_name = {s.qualified_name: s for s in split_python_source(BOX, "box.py")}
    assert by_name["Box.size"].tests == []  # only another method is called
    assert by_name["Box.size"].entry_point == "size"
    assert by_name["Box.__len__"].tests == ["__doctest_example__('len(Box())', '0')"]
    assert by_name["Box.__len__"].entry_point == "Box"
    assert by_name["Box.__reduce__"].tests == []  # no syntax of the tests runs it
    assert by_name["Box._calc_n"].tests == ["__doctest_example__('Box().n', '0')"]  # its alias


def test_syntax_error_names_file_and_line() -> None:
    with pytest.raises(SourceFileError, match=r"^broken\.py:3: syntax error") as raised:
        split_python_source("x = 1\n\ndef f(:\n    pass\n", "broken.py")
    assert raised.value.line == 3


def test_non_utf8_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.py"
    path.write_bytes(b"def f():\n    return 1\n# caf\xe9\n")
    with pytest.raises(SourceFileError, match=r"latin1\.py:3: not UTF-8 text"):
        split_python_file(path)


def test_split_tree_skips_hidden_and_tool_directories_and_reports_bad_files(
    tmp_path: Path,
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "good.py").write_text("def good():\n    return 1\n")
    (tmp_path / "pkg" / "empty.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "bad.py").write_text("def bad(\n")
    (tmp_path / "pkg" / "notes.txt").write_text("def not_python(): pass\n")
    (tmp_path / "binary.py").write_bytes(b"\xff\xfe\x00def f(): pass\n")
    for ignored in (".venv", ".git", "__pycache__", "node_modules"):
        (tmp_path / ignored).mkdir()
        (tmp_path / ignored / "hidden.py").write_text("def hidden():\n    return 2\n")

    tree = split_tree(tmp_path)

    root = tmp_path.resolve()
    assert sorted(tree.files) == [str(root / "pkg" / "empty.py"), str(root / "pkg" / "good.py")]
    assert tree.files[str(root / "pkg" / "empty.py")] == []
    assert [s.qualified_name for s in tree.snippets] == ["good"]
    assert tree.skipped.count == 2
    reasons = {Path(s.file).name: str(s) for s in tree.skipped.files}
    assert reasons["bad.py"].endswith("bad.py:1: syntax error: '(' was never closed")
    assert reasons["binary.py"].endswith("binary.py:1: not UTF-8 text")


def test_split_tree_of_a_single_file_and_of_a_missing_path(tmp_path: Path) -> None:
    file = tmp_path / "one.py"
    file.write_text("def one():\n    return 1\n")
    tree = split_tree(file)
    assert list(tree.files) == [str(file.resolve())]
    with pytest.raises(SourceFileError, match="no such file or directory"):
        split_tree(tmp_path / "missing")


def test_sample_codebase_splits_completely() -> None:
    tree = split_tree(CODEBASE)
    assert tree.skipped.count == 0
    names = {s.qualified_name for s in tree.snippets}
    assert len(tree.snippets) == 25
    assert {"slugify", "is_leap_year", "Rect.intersects", "Rect.Builder.add"} <= names
    with_tests = {s.qualified_name for s in tree.snippets if s.tests}
    assert with_tests == {
        "slugify",
        "word_count",
        "is_palindrome",
        "truncate",
        "gcd",
        "lcm",
        "is_prime",
        "fibonacci",
        "clamp",
        "is_leap_year",
        "days_in_month",
        "chunked",
        "rect_area",
        "parse_iso_date",
        "Rect.area",  # a method: judged in its class
    }  # not mean (+SKIP)


def test_line_numbers_follow_python_not_str_splitlines() -> None:
    source = 'def a():\n    return 1\n\x0c\ndef b():\n    s = "x\u2028y"\n    return 2\n'
    a, b = split_python_source(source, "ff.py")
    assert a.code.rstrip().endswith("return 1")
    assert (b.start_line, b.end_line) == (4, 6)
    assert b.code.rstrip().endswith("return 2")


def test_a_byte_order_mark_is_valid_source(tmp_path: Path) -> None:
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfdef f():\n    return 1\n")
    (snippet,) = split_python_file(path)
    assert snippet.entry_point == "f"


def test_the_same_definition_twice_is_one_snippet() -> None:
    source = "if True:\n    def f():\n        return 1\nelse:\n    def f():\n        return 1\n"
    assert [s.qualified_name for s in split_python_source(source, "twice.py")] == ["f"]


ASSIGNED_DOCS = '''
import toolz


def inc(x):
    return x + 1


inc.__doc__ = """Add one.

    >>> inc(1)
    2
"""


def _twice(x):
    """Twice.

    >>> twice(2)
    4
    """
    return 2 * x


try:
    from fast import twice
except ImportError:
    twice = _twice
else:
    def twice(x):
        return _twice(x)

    twice.__doc__ = _twice.__doc__


def own(x):
    """Its own.

    >>> own(1)
    1
    """
    return x


own.__doc__ = """>>> own(1)
999"""


def elsewhere(x):
    return x


elsewhere.__doc__ = toolz.merge.__doc__
'''


def test_a_docstring_assigned_after_the_definition_is_the_functions_own() -> None:
    snippets = {s.qualified_name: s for s in split_python_source(ASSIGNED_DOCS, "m.py")}
    assert snippets["inc"].docstring.startswith("Add one.")
    assert snippets["inc"].tests == ["__doctest_example__('inc(1)', '2')"]
    assert snippets["twice"].tests == ["__doctest_example__('twice(2)', '4')"]  # from _twice
    assert snippets["own"].tests == ["__doctest_example__('own(1)', '1')"]  # its own wins
    assert (snippets["elsewhere"].docstring, snippets["elsewhere"].tests) == ("", [])


def test_examples_that_call_a_module_alias_of_the_function_test_it() -> None:
    source = (
        'def parse_timedelta(text):\n    """Parse.\n\n    >>> parse_td("2")\n    2\n    """\n'
        "    return int(text)\n\n\nparse_td = parse_timedelta\n\n\n"
        'def other(text):\n    """>>> parse_td("3")\n    3\n    """\n    return text\n'
        'def rebound(text):\n    """>>> rb("3")\n    3\n    """\n    return text\n\n\n'
        "rb = rebound\nrb = other\n"
    )
    snippets = {s.qualified_name: s for s in split_python_source(source, "m.py")}
    assert snippets["parse_timedelta"].tests == ["__doctest_example__('parse_td(\"2\")', '2')"]
    assert snippets["other"].tests == []  # the alias is another function's
    assert snippets["rebound"].tests == []  # rebound later: at run time it is another one


URL = '''
class URL:
    def __init__(self, text):
        self.scheme, _, self.rest = text.partition(":")

    @property
    def uses_netloc(self):
        """Whether the scheme separates with ``://``.

        >>> print(URL('http://a').to_text())
        http://a
        """
        return self.scheme in ("http", "https")

    def to_text(self):
        return self.scheme + (":" if not self.uses_netloc else ":") + self.rest

    def unrelated(self):
        """>>> URL('x:y').to_text()
        'x:y'
        """
        return 0
'''


def test_a_method_another_method_reads_is_reached_through_it() -> None:
    """boltons ``URL.uses_netloc``: its examples call ``to_text()``, whose body reads it."""
    by_name = {s.qualified_name: s for s in split_python_source(URL, "url.py")}
    assert by_name["URL.uses_netloc"].tests == [
        "__doctest_example__(\"print(URL('http://a').to_text())\", 'http://a')"
    ]
    assert by_name["URL.unrelated"].tests == []  # nothing the examples reach reads it


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_docstring_copied_from_another_module_of_the_tree_is_followed(tmp_path: Path) -> None:
    """``f.__doc__ = pkg.g.__doc__`` as the import system would resolve it, reading the sources:
    module imports and aliases, relative imports, submodules, star imports (underscore names
    excepted), a few hops deep; what cannot be told stays no docstring."""
    doc = '"""{name}.\n\n    >>> {name}(1)\n    1\n    """'
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from .core import *\nfrom .loop import *\n",
            "pkg/core.py": "def merge(x):\n    {}\n    return x\n\n\ndef _private(x):\n"
            "    {}\n    return x\n".format(doc.format(name="merge"), doc.format(name="_private")),
            "pkg/loop.py": "from pkg import *\n",  # a star-import cycle: ends, finds nothing
            "pkg/sub/__init__.py": "",
            "pkg/sub/wrap.py": (
                "import pkg\nimport pkg.core as core_alias\nfrom .. import core\n"
                "from ..core import merge as real_merge\nfrom missing_pkg import gone\n\n"
                + "".join(f"def {n}(x):\n    return x\n\n\n" for n in "abcdefgh")
                + "a.__doc__ = pkg.merge.__doc__\n"  # through the package's star import
                "b.__doc__ = core.merge.__doc__\n"  # a relatively imported submodule
                "c.__doc__ = real_merge.__doc__\n"  # a name imported under an alias
                "d.__doc__ = core_alias.merge.__doc__\n"
                "e.__doc__ = pkg.core.merge.__doc__\n"  # a submodule path
                "f.__doc__ = pkg._private.__doc__\n"  # a star import skips underscore names
                "g.__doc__ = gone.__doc__\n"  # outside the tree
                "h.__doc__ = pkg.nowhere.__doc__\n"  # the cycle
            ),
        },
    )
    split = split_tree(tmp_path)
    docs = {s.qualified_name: s.docstring for s in split.snippets if s.module == "pkg.sub.wrap"}
    assert {name for name, text in docs.items() if text.startswith("merge.")} == set("abcde")
    assert (docs["f"], docs["g"], docs["h"]) == ("", "", "")
    wrapped = [s for s in split.snippets if s.module == "pkg.sub.wrap" and s.qualified_name == "a"]
    assert wrapped[0].tests == []  # the copied examples call merge, not a
    # The same file on its own (one cache per call) resolves the same way.
    alone = {s.qualified_name: s.docstring for s in split_python_file(tmp_path / "pkg/sub/wrap.py")}
    assert alone == docs
