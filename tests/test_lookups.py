"""lookups: each kind defined once (its input and check, request, rows rule, model, columns), and
read, not branched on, by the pipeline, the typed conversion and the CLI's tables."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
import responses

from helpers.terms import REL, page, semantic_type
from helpers.uts import BASE, answer, make_uts
from tempmedbench_synonyms import paths
from tempmedbench_synonyms.cli.umls import _command, _shown_of
from tempmedbench_synonyms.errors import BadInputError, Outcome
from tempmedbench_synonyms.lookups import (
    COUNTED,
    EVERY_ROW,
    KINDS,
    Atom,
    Atoms,
    Column,
    Concept,
    Crosswalk,
    Cuis,
    Definitions,
    Hierarchy,
    Lookup,
    Relations,
    Rows,
    Search,
    SemanticTypes,
    SourceAtoms,
    SourceConcept,
    Sources,
    counted,
)
from tempmedbench_synonyms.paths import UtsRequest
from tempmedbench_synonyms.uts import models
from tempmedbench_synonyms.uts.models import Record, SemanticTypeInfo, read_results


@dataclass(frozen=True, slots=True)
class TuiInfo(Lookup):
    """An invented kind, defined here alone: one semantic type by its TUI."""

    command = "tui"
    inputs = ("tui",)
    argument = ("TUI", "Semantic types.")
    model = "SemanticTypeInfo"
    columns = (Column("NAME", "name"), Column("TREE", "tree_number"))

    tui: str = ""

    def request(self, release: str) -> UtsRequest:
        return paths.semantic_type(release, self.tui)

    def words(self) -> tuple[str, str]:
        return f"semantic type {self.tui}", f"no semantic type {self.tui}"

    def ask(self, engine: Any) -> Any:
        return engine.semantic_type(self.tui)


class Recorder:
    """An engine that answers each question with the question: its method and arguments."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: [(name, args, kwargs)]


@responses.activate
def test_a_new_kind_is_one_class_that_the_pipeline_the_models_and_the_table_read(
    tmp_path: Path,
) -> None:
    responses.get(f"{BASE}/semantic-network/{REL}/TUI/T901",
                  json=page(semantic_type("T901", "Invented type", "A9.1")))  # fmt: skip
    got = answer(make_uts(tmp_path), REL, "T901", TuiInfo("T901"))
    assert (got.outcome, got.message, got.query) == (
        Outcome.FOUND, "1 result for semantic type T901, UMLS 2099AA", "semantic type T901",
    )  # fmt: skip
    (model,) = read_results(got, TuiInfo("T901"))
    assert isinstance(model, SemanticTypeInfo)
    shown = _shown_of(TuiInfo)
    assert shown.header == ["NAME", "TREE"]
    assert shown.rows(TuiInfo("T901"), got) == [["Invented type", "A9.1"]]
    # its check is its request's: a malformed TUI is bad input, and nothing is sent
    bad = answer(make_uts(tmp_path), REL, "X1", TuiInfo("X1"))
    assert (bad.outcome, bad.message) == (
        Outcome.BAD_INPUT,
        "TUI 'X1' is not a UMLS semantic type identifier: expected T and 3 digits, such as T047",
    )
    assert len(responses.calls) == 1
    # the CLI makes its command: its argument, the network options, its help
    command = _command(TuiInfo)
    assert command.__name__ == "tui_command"
    assert list(inspect.signature(command).parameters)[:2] == ["ids", "asking"]
    # the local engine answers it by the one method it names
    assert TuiInfo("T901").ask(Recorder()) == [("semantic_type", ("T901",), {})]


def test_each_kind_says_which_rows_it_answers_from_as_spec_12_says() -> None:
    english = Rows(english=True)
    assert [k.rows() for k in (Atoms("C1"), SourceAtoms("S", "1"))] == [english, english]
    preferred = (Atoms("C1", preferred=True), SourceAtoms("S", "1", preferred=True), Atom("A1"))
    assert [k.rows() for k in preferred] == [EVERY_ROW] * 3
    assert [k.rows() for k in (Search("x"), Cuis(), Crosswalk(), Definitions(), Relations())] == [
        COUNTED
    ] * 5
    assert Search("x", include_obsolete=True).rows() == Rows(frozenset({"N", "O"}))
    assert Search("x", include_suppressible=True).rows() == Rows(frozenset({"N", "E", "Y"}))
    every = (Concept(), SourceConcept(), Hierarchy(), SemanticTypes(), Sources())
    assert [k.rows() for k in every] == [EVERY_ROW] * 5


@pytest.mark.parametrize(
    ("rows", "suppress", "lat", "counts"),
    [
        (COUNTED, "N", "FRE", True),
        (COUNTED, "", "ENG", True),  # anything but O, E and Y counts as N
        (COUNTED, "O", "ENG", False),
        (COUNTED, "Y", "ENG", False),
        (Rows(english=True), "N", "FRE", False),
        (Rows(frozenset({"N", "E", "Y"})), "E", "ENG", True),
        (EVERY_ROW, "O", "FRE", True),
    ],
)
def test_a_rows_rule_counts_a_row_by_its_suppress_and_lat(
    rows: Rows, suppress: str, lat: str, counts: bool
) -> None:
    """As a local answer reads the rule (the engine's SQL): a concept's one row, counted or not."""
    from mrconso.test_engine import build, row

    umls = build({"MRCONSO": [row("C1", "A1", "SRC", "1", "x", suppress=suppress, lat=lat)]})
    assert umls.atoms(cui="C1", rows=rows) == ([ANY] if counts else [])


def test_every_kind_has_its_command_its_model_and_columns_its_model_has() -> None:
    assert len({kind.command for kind in KINDS}) == len(KINDS) == 13
    for kind in KINDS:
        model = getattr(models, kind.model)
        assert issubclass(model, Record), kind
        for column in kind.columns:
            found = column.attribute in model.model_fields
            assert found or isinstance(getattr(model, column.attribute, None), property), column
        assert set(kind.inputs) <= {f.name for f in fields(kind)}, kind


def test_each_kind_asks_the_local_engine_its_one_method_with_its_fields() -> None:
    """SPEC 12: each command is one question of the engine (``cuis SAB CODE`` exactly ``search
    CODE --input-type sourceUi --search-type exact --sabs SAB``; ``--preferred`` sends no sab)."""
    engine = Recorder()
    english = Rows(english=True)
    search = {"search_type": "exact", "input_type": "sourceUi", "return_id_type": "concept",
              "sabs": ("MSH",), "semantic_types": (), "partial": False, "language": None,
              "rows": COUNTED, "limit": 1001}  # fmt: skip
    asked = {
        # a search names one result more than --limit (25 by default) shows: it says truncated
        Search("fever"): ("search", ("fever",), {
            **search, "search_type": "words", "input_type": "atom", "sabs": (), "limit": 26}),
        Search("fever", limit=0): ("search", ("fever",), {
            **search, "search_type": "words", "input_type": "atom", "sabs": (), "limit": None}),
        Search("f", "normalizedWords", "code", "aui", ("MSH",), ("T047",), True, True, False,
               "ENG"): ("search", ("f",), {
            **search, "search_type": "normalizedWords", "input_type": "code",
            "return_id_type": "aui", "semantic_types": ("T047",), "partial": True,
            "language": "ENG", "rows": counted(obsolete=True), "limit": 26}),
        Cuis("MSH", "D1"): ("search", ("D1",), search),
        Crosswalk("MSH", "D1", ("NCI",)): (
            "crosswalk", ("MSH", "D1"), {"targets": ("NCI",), "rows": COUNTED}),
        Definitions("C1", ("MSH",)): ("definitions", ("C1",), {"sabs": ("MSH",), "rows": COUNTED}),
        Relations(None, "MSH", "D1", None, ("PAR",), ("MSH",)): ("relations", (), {
            "cui": None, "sab": "MSH", "code": "D1", "aui": None, "labels": ("PAR",),
            "sabs": ("MSH",), "rows": COUNTED}),
        SemanticTypes("C1", True): ("semantic_types", ("C1",), {"details": True}),
        SourceConcept("MSH", "D1"): ("cluster", ("MSH", "D1"), {}),
        Hierarchy("ancestors", None, None, "A1"): (
            "hierarchy", ("ancestors",), {"sab": None, "code": None, "aui": "A1"}),
        Sources(): ("sources", (), {}),
        Concept("C1"): ("concept", ("C1",), {}),
        Atoms("C1", "MSH"): ("atoms", (), {"cui": "C1", "sabs": ("MSH",), "rows": english}),
        Atoms("C1"): ("atoms", (), {"cui": "C1", "sabs": (), "rows": english}),
        Atoms("C1", "MSH", preferred=True): ("preferred_atom", (), {"cui": "C1"}),
        SourceAtoms("MSH", "D1"): (
            "atoms", (), {"sab": "MSH", "code": "D1", "rows": english}),
        SourceAtoms("MSH", "D1", True): ("preferred_atom", (), {"sab": "MSH", "code": "D1"}),
        Atom("A1"): ("atom", ("A1",), {}),
    }  # fmt: skip
    assert {type(lookup) for lookup in asked} == set(KINDS)
    for lookup, question in asked.items():
        assert lookup.ask(engine) == [question], lookup


def test_a_local_check_is_the_requests_but_for_the_language_a_local_search_knows() -> None:
    Search("fever", language="ENG").check()  # over UTS, bad input (its request refuses it)
    for lookup, message in (
        (Search(" "), "search term ' ' cannot be sent to UMLS: it is empty"),
        (Concept("XYZ"), "CUI 'XYZ' is not a UMLS concept identifier: expected C and 7 digits, "
         "such as C0020538"),
        (Atoms("C0000001", limit=-1), "--limit -1 is out of range: give 0 (no cap) or more"),
    ):  # fmt: skip
        with pytest.raises(BadInputError) as raised:
            lookup.check()
        assert str(raised.value) == message
