"""How a real library's doctests are found and attached to what they test (issue 17, item 7).

The fixture (tests/snippets/attach/views.py) is shaped like sortedcontainers: a view made by a
method of another class (``d.keys()``), a module function a class installs as a method
(``__delitem__ = _view_delitem``), and outputs showing a builtin (``key=<built-in function
neg>``). Before, none of these had stored tests; now each does, its tests verify it in the
sandbox, and a mutant its doctest catches fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from guardrail.gate import Gate
from guardrail.index import split_python_source
from guardrail.index.snippet import Snippet, decode_metadata
from guardrail.reach import method_reached
from guardrail.sandbox.base import Sandbox
from guardrail.spec import Spec
from guardrail.verdict import Status

FIXTURES = Path(__file__).parent / "snippets" / "attach"
VIEWS = FIXTURES / "views.py"
ATTACHED = {"_view_delitem": 4, "KeysView.__getitem__": 4, "KeyList.__init__": 1,
            "KeyList.merged": 1}  # fmt: skip


def _snippets(name: str = "views") -> dict[str, Snippet]:
    source = (FIXTURES / f"{name}.py").read_text()
    found = split_python_source(source, f"{name}.py", module=name, root=str(FIXTURES))
    return {s.qualified_name: s for s in found}


def test_each_doctest_attaches_to_what_it_runs() -> None:
    snippets = _snippets()
    assert {name: len(snippets[name].tests) for name in ATTACHED} == ATTACHED
    assert snippets["SortedDict.keys"].tests == []  # it has no docstring of its own
    (prime,) = _snippets("primes").values()  # the examples before the seed are its tests
    assert [t.partition(",")[0] for t in prime.tests] == [
        "__doctest_example__('is_prime(37)'",
        "__doctest_example__('is_prime(3 * 13)'",
    ]


def _reached(test: str, method: str, module: str) -> bool:
    return method_reached([ast.parse(test)], method, ast.parse(module))


MODULE = """
class View:
    def __getitem__(self, i): return i
class Dict:
    def keys(self): return self._make()
    def _make(self): return View()
    def other(self): return 1
def make_view(): return through()
def through(): return View()
"""


@pytest.mark.parametrize(
    ("test", "reached"),
    [
        ("v = Dict().keys(); v[0]", True),  # a method of another class makes the view
        ("v = make_view(); v[0]", True),  # a module function, through another
        ("v = View(); v[0]", True),
        ("v = Dict().other(); v[0]", False),  # nothing that makes a View
        ("v = Dict().keys(); v", False),  # a View made, never indexed
        ("v = [1]; v[0]", False),
    ],
)
def test_a_protocol_method_is_reached_through_the_modules_makers_of_its_class(
    test: str, reached: bool
) -> None:
    assert _reached(test, "View.__getitem__", MODULE) is reached


def test_a_makers_own_class_method_is_not_a_maker() -> None:
    module = "class View:\n    def copy(self): return View()\n    def __len__(self): return 0\n"
    assert not _reached("len(x.copy())", "View.__len__", module)


@pytest.mark.docker
def test_attached_doctests_verify_the_code_and_fail_its_mutants(docker_sandbox: Sandbox) -> None:
    """Each is judged in its module (the fixture file), the retrieved text in its place."""
    snippets = _snippets() | _snippets("primes")
    mutants = {
        "is_prime": ("int(n**0.5) + 1", "2"),
        "_view_delitem": ("[index]]", "[index + 1]]"),
        "KeysView.__getitem__": ("._keys[index]", "._keys[index - 1]"),
        "KeyList.__init__": ("sorted(values, key=key)", "sorted(values)"),
        "KeyList.merged": ("[*self._values, *values]", "[*self._values]"),
    }
    codes, specs, metadata = [], [], []
    for name, (old, new) in mutants.items():
        snippet = snippets[name]
        assert old in snippet.code
        spec = Spec.build(snippet.tests, snippet.entry_point, snippet.setup)
        meta = decode_metadata(snippet.to_metadata())
        for code in (snippet.code, snippet.code.replace(old, new, 1)):
            codes.append(code)
            specs.append(spec)
            metadata.append(meta)
    gate = Gate(docker_sandbox, cache=False, context_roots=[FIXTURES])  # as an indexed folder
    verdicts = gate.verify(codes, specs, metadata=metadata)
    right = [(v.status, v.reason, [t.detail for t in v.tests]) for v in verdicts[0::2]]
    assert all(v.status is Status.VERIFIED for v in verdicts[0::2]), right
    assert [v.status for v in verdicts[1::2]] == [Status.FAILED] * len(mutants)
