"""Plant six copy-paste clones into a toolz 0.12.1 tree, each with one line changed.

``python bench/plant_toolz_clones.py toolz-0.12.1/toolz`` writes ``toolz/_vendored.py``: copies
of ``take`` and ``interpose`` (they return iterators), ``partition_all`` (a generator), ``nth``,
``isdistinct`` and ``frequencies``, taken from the tree's own ``itertoolz.py``, each with the one
edit in `MUTATIONS`, as a vendored copy in a project would drift. ``guardrail audit`` on the tree
must find all six (docs/audits.md).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MUTATIONS = {  # function -> (its line as in toolz 0.12.1, the line in the copy)
    "take": ("return itertools.islice(seq, n)", "return itertools.islice(seq, n + 1)"),
    "partition_all": ("yield prev[:len(seq) % n]", "yield prev[:len(seq) // n]"),
    "interpose": ("itertools.repeat(el), seq", "itertools.repeat(seq), seq"),
    "nth": ("return seq[n]", "return seq[n - 1]"),
    "isdistinct": ("return len(seq) == len(set(seq))", "return len(seq) >= len(set(seq))"),
    "frequencies": ("d[item] += 1", "d[item] = 1"),
}
HEADER = '''"""itertoolz functions pasted into another module, each with one line changed."""

import collections
import itertools
from collections.abc import Sequence
from itertools import zip_longest

from toolz.itertoolz import concat, no_pad
'''


def plant(package: Path) -> Path:
    """Write ``package/_vendored.py`` and return its path."""
    source = (package / "itertoolz.py").read_text(encoding="utf-8")
    parts = [HEADER]
    for name, (line, changed) in MUTATIONS.items():
        found = re.search(rf"^def {name}\(.*?(?=^\S)", source, flags=re.DOTALL | re.MULTILINE)
        if found is None or found.group(0).count(line) != 1:
            raise SystemExit(f"{name}: not the toolz 0.12.1 text this script expects")
        parts.append(found.group(0).rstrip().replace(line, changed) + "\n")
    target = package / "_vendored.py"
    target.write_text("\n\n".join(parts), encoding="utf-8")
    return target


if __name__ == "__main__":
    print(plant(Path(sys.argv[1])))
