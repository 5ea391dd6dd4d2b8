"""Results files in the release's ``results/<model>.json`` shape: load, replay, write.

Top level: ``model``, ``n_queries``, ``n_corpus``, ``ks``, ``metrics`` (4-decimal floats keyed
``exec@1``, ``precision@1``, ``ndcg@1``, ``exec_ndcg_gap@1``, ... for each k) and ``per_query``;
each query holds its ``top_results`` with ``rank`` (1-based), ``corpus_id``, ``label``,
``bug_type`` ("" for a canonical), ``similarity``, ``passes_all_tests`` and ``test_results``.
Unknown fields are accepted and kept (our gated runs add a ``verdict`` per item and fields such
as ``gate``).

A replay uses the stored ``rank`` order, never a re-sort of the (rounded) similarities.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from guardrail.safetext import dumps_json
from guardrail_eval.errors import ResultsFormatError, describe_validation_error, format_location
from guardrail_eval.metrics import RankedItem, RankedQuery, compute_metrics, round_metrics
from guardrail_eval.outputs import write_text_atomically

__all__ = [
    "QueryResult",
    "ResultsFile",
    "TopResult",
    "load_results",
    "recompute_metrics",
    "write_results",
]


class TopResult(BaseModel):
    """One retrieved snippet of a query's ranking."""

    model_config = ConfigDict(extra="allow")

    rank: int = Field(ge=1)
    corpus_id: str = Field(min_length=1)
    label: Literal["correct", "incorrect"]
    bug_type: str = ""
    similarity: float
    passes_all_tests: bool
    test_results: list[str] = Field(default_factory=list)
    """Per-test outcomes (``pass``, ``FAIL``, ``FAIL:...``, ``TIMEOUT``, ``ERROR:...``); empty
    when the release's execution cache did not hold the pair."""


class QueryResult(BaseModel):
    """One query's ranking."""

    model_config = ConfigDict(extra="allow")

    query_id: str = Field(min_length=1)
    query: str
    correct_corpus_ids: list[str] = Field(min_length=1)
    top_results: list[TopResult]

    @model_validator(mode="after")
    def _ranks_are_distinct(self) -> QueryResult:
        seen: set[int] = set()
        for item in self.top_results:
            if item.rank in seen:
                raise ValueError(f"rank {item.rank} appears twice in top_results")
            seen.add(item.rank)
        return self

    def ranked(self) -> list[TopResult]:
        """The ranking in stored ``rank`` order (rank 1 first)."""
        return sorted(self.top_results, key=lambda item: item.rank)

    def ranked_query(self, paired_distractor_ids: Collection[str] = ()) -> RankedQuery:
        """This ranking as metric input; paired ids come from the pool (the file has none)."""
        return RankedQuery(
            query_id=self.query_id,
            items=tuple(
                RankedItem(
                    corpus_id=item.corpus_id,
                    passes_all_tests=item.passes_all_tests,
                    is_correct_id=item.corpus_id in self.correct_corpus_ids,
                    bug_type=item.bug_type,
                    is_paired_distractor=item.corpus_id in paired_distractor_ids,
                    score=item.similarity,
                )
                for item in self.ranked()
            ),
            n_correct=len(self.correct_corpus_ids),
        )


class ResultsFile(BaseModel):
    """A whole ``results/<model>.json``."""

    model_config = ConfigDict(extra="allow")

    model: str
    n_queries: int = Field(ge=0)
    n_corpus: int = Field(ge=0)
    ks: list[int] = Field(min_length=1)
    metrics: dict[str, float]
    per_query: list[QueryResult]

    @model_validator(mode="after")
    def _consistent(self) -> ResultsFile:
        if any(k < 1 for k in self.ks) or len(set(self.ks)) != len(self.ks):
            raise ValueError(f"ks must be distinct positive cut-offs, not {self.ks}")
        if self.n_queries != len(self.per_query):
            raise ValueError(
                f"n_queries is {self.n_queries} but per_query holds {len(self.per_query)} queries"
            )
        return self

    def ranked_queries(
        self, paired_distractors: Mapping[str, Collection[str]] | None = None
    ) -> list[RankedQuery]:
        """Every query's ranking as metric input, in file order.

        Args:
            paired_distractors: query id -> its paired distractor ids (from the pool), needed
                for the rank-1 miss composition; without it no item counts as paired.
        """
        paired = paired_distractors or {}
        return [query.ranked_query(paired.get(query.query_id, ())) for query in self.per_query]


def recompute_metrics(results: ResultsFile, *, rounded: bool = False) -> dict[str, float]:
    """The file's metrics recomputed from its rankings (at its ``ks``), unrounded by default.

    With ``rounded=True`` they are rounded as ``guardrail eval`` writes them (`round_metrics`),
    so they can be compared with its stored ``metrics`` key by key; a release file rounds its
    gaps from rounded parts (`guardrail_eval.metrics.release_rounded` of the unrounded ones).
    """
    metrics = compute_metrics(results.ranked_queries(), results.ks)
    return round_metrics(metrics) if rounded else metrics


def load_results(path: Path) -> ResultsFile:
    """Load and validate a results file.

    Raises:
        ResultsFormatError: the file cannot be read, is not JSON, or does not have the shape
            above; the message names the line of the offending value.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ResultsFormatError(path, None, "", "no such results file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsFormatError(path, None, "", f"cannot read: {exc}") from None
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFormatError(
            path, exc.lineno, "", f"not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise ResultsFormatError(path, 1, "", f"expected a JSON object, got {type(data).__name__}")
    try:
        return ResultsFile.model_validate(data, strict=True)
    except ValidationError as exc:
        location, problem = describe_validation_error(exc)
        line = _line_of(text, location)
        raise ResultsFormatError(path, line, format_location(location), problem) from None


def write_results(results: ResultsFile, path: Path) -> None:
    """Write ``results`` as indented JSON, atomically (a temporary file renamed into place).

    Raises:
        OutputError: the file cannot be written.
    """
    text = dumps_json(results.model_dump(mode="json")) + "\n"
    write_text_atomically({path: text})


def _line_of(text: str, location: Sequence[str | int]) -> int:
    """Line of the deepest value along ``location`` that exists in the JSON ``text``."""
    decoder = json.JSONDecoder()
    position = _skip_space(text, 0)
    for part in location:
        child = _child(text, position, part, decoder)
        if child is None:
            break
        position = child
    return text.count("\n", 0, position) + 1


def _child(text: str, start: int, part: str | int, decoder: json.JSONDecoder) -> int | None:
    """Position of member ``part`` of the object or array starting at ``start``, if present."""
    opening = text[start : start + 1]
    if (opening, isinstance(part, int)) not in {("{", False), ("[", True)}:
        return None
    closing = "}" if opening == "{" else "]"
    position = _skip_space(text, start + 1)
    index = 0
    while text[position : position + 1] != closing:
        if opening == "{":
            key, position = decoder.raw_decode(text, position)
            position = _skip_space(text, _skip_space(text, position) + 1)  # past the colon
            if key == part:
                return position
        elif index == part:
            return position
        _, position = decoder.raw_decode(text, position)
        position = _skip_space(text, position)
        if text[position : position + 1] == ",":
            position = _skip_space(text, position + 1)
        index += 1
    return None


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position
