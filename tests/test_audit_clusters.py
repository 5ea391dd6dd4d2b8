"""Near-clone clusters: token shingles, MinHash/LSH candidates, confirmation, union-find.

Runs on clonelib (``tests/snippets/audit/``): toolz 1.0.0's itertoolz plus a module of
copy-pasted functions, some with planted bugs. No sandbox, no embedding model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.audit import ClusterSettings, code_tokens, find_clusters, token_similarity
from guardrail.audit.tokens import shingles
from guardrail.index import Snippet, split_tree

CLONELIB = Path(__file__).parent / "snippets" / "audit"
PLANTED = {"isdistinct", "nth", "frequencies", "count"}


def _names(cluster_members: tuple[Snippet, ...]) -> list[tuple[str, str]]:
    return [(m.module, m.qualified_name) for m in cluster_members]


def test_tokens_ignore_comments_and_layout_but_not_line_structure() -> None:
    plain = code_tokens("def f(x):\n    return x + 1\n")
    commented = code_tokens("def f(x):  # add one\n\n    return x + \\\n        1\n")
    assert commented == plain
    assert code_tokens("a\nb\n") != code_tokens("a b\n")


def test_tokens_of_text_the_tokenizer_rejects_are_still_words() -> None:
    assert code_tokens("def f(:\n    '''unterminated") == [
        "def",
        "f",
        "(",
        ":",
        "'",
        "'",
        "'",
        "unterminated",
    ]


def test_shingles_of_a_short_sequence_are_one_run() -> None:
    assert shingles(["a", "b"], size=4) == {"a\x1fb"}
    assert len(shingles(list("abcdef"), size=4)) == 3


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        ("abcd", "abcd", 1.0),
        ("abcd", "abxd", 0.75),  # one substitution in four
        ("abcd", "abd", 0.75),  # one deletion
        ("", "", 1.0),
    ],
)
def test_token_similarity_is_one_minus_edit_distance_over_length(
    left: str, right: str, expected: float
) -> None:
    assert token_similarity(list(left), list(right)) == pytest.approx(expected)


def test_token_similarity_below_the_floor_is_none_and_the_band_is_exact() -> None:
    # A distance at the edge of the band is still computed exactly.
    assert token_similarity(list("abcdefghij"), list("abcdefghXY"), floor=0.8) == pytest.approx(0.8)
    assert token_similarity(list("abcdefghij"), list("abcdefgXYZ"), floor=0.8) is None
    assert token_similarity(list("aaaa"), list("aaaaaaaaaa"), floor=0.5) is None  # lengths alone


def test_every_planted_copy_is_clustered_with_its_original() -> None:
    tree = split_tree(CLONELIB)
    report = find_clusters(tree.snippets)

    pairs = {
        frozenset(_names(cluster.members))
        for cluster in report.clusters
        if len(cluster.members) == 2
    }
    for name in PLANTED:
        assert frozenset({("clonelib.itertoolz", name), ("clonelib.vendored", name)}) in pairs
    # LSH proposed only a handful of pairs out of all 45 * 44 / 2.
    assert report.candidate_pairs < 20
    assert report.confirmed_pairs == sum(len(c.pairs) for c in report.clusters)


def test_unrelated_functions_are_not_clustered() -> None:
    tree = split_tree(CLONELIB)
    report = find_clusters(tree.snippets)
    clustered = {name for c in report.clusters for name in _names(c.members)}
    assert ("clonelib.itertoolz", "groupby") not in clustered
    assert ("clonelib.itertoolz", "interleave") not in clustered


def test_short_snippets_are_left_out() -> None:
    tiny = [Snippet(code=f"def f{i}(x):\n    return x\n", qualified_name=f"f{i}") for i in range(3)]
    report = find_clusters(tiny)
    assert (report.compared, report.candidate_pairs, report.clusters) == (0, 0, ())


def test_a_pair_is_confirmed_by_stored_embeddings_when_tokens_do_not() -> None:
    tree = split_tree(CLONELIB)
    original, copy = [s for s in tree.snippets if s.qualified_name == "nth"]
    strict = ClusterSettings(tokens=1.0)  # no edited copy reaches it: only vectors confirm
    apart = {original.index_id: [1.0, 0.0], copy.index_id: [0.0, 1.0]}
    close = {original.index_id: [1.0, 0.0], copy.index_id: [0.999, 0.0447]}

    assert find_clusters([original, copy], apart, strict).confirmed_pairs == 0
    ((pair,),) = [c.pairs for c in find_clusters([original, copy], close, strict).clusters]
    assert pair.token_similarity is None
    assert pair.embedding_similarity == pytest.approx(0.999, abs=1e-3)


def test_two_runs_give_the_same_clusters() -> None:
    tree = split_tree(CLONELIB)
    assert find_clusters(tree.snippets) == find_clusters(list(tree.snippets))
