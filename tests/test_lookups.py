"""lookups: each kind defined once (its input and check, request, rows rule, model, columns), and
read, not branched on, by the pipeline, the typed conversion and the CLI's tables."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, fields
from pathlib import Path

import pytest
import responses

from helpers.terms import REL, page, semantic_type
from helpers.uts import BASE, answer, make_uts
from tempmedbench_synonyms import paths
from tempmedbench_synonyms.cli.umls import _command, _shown_of
from tempmedbench_synonyms.errors import Outcome
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
)
from tempmedbench_synonyms.mrconso.lookup import answer_many
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
    files = ("MRSTY.RRF",)

    tui: str = ""

    def request(self, release: str) -> UtsRequest:
        return paths.semantic_type(release, self.tui)

    def words(self) -> tuple[str, str]:
        return f"semantic type {self.tui}", f"no semantic type {self.tui}"


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
    # a local MRCONSO.RRF cannot answer it: that input's bad input, naming the file and the
    # request it needs, and the batch goes on
    mrconso = tmp_path / "MRCONSO.RRF"
    mrconso.write_text("C0000001|ENG|P|L1|PF|S1|Y|A0000001||||MSH|PT|D1|Fever|0|N||\n", "utf-8")
    local, atoms = answer_many(mrconso, REL, [("T901", TuiInfo("T901")), ("C", Atoms("C0000001"))])
    assert (local.outcome, local.message, local.hint, local.query) == (
        Outcome.BAD_INPUT,
        "semantic type T901 is in MRSTY.RRF, not in MRCONSO.RRF (UTS: GET "
        "/semantic-network/2099AA/TUI/T901)",
        "ask the UMLS REST API for it: the same lookup without a local MRCONSO.RRF",
        "semantic type T901",
    )
    assert [a["ui"] for a in atoms.results] == ["A0000001"]


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
    assert rows.counts(suppress, lat) is counts


def test_every_kind_has_its_command_its_model_and_columns_its_model_has() -> None:
    assert len({kind.command for kind in KINDS}) == len(KINDS) == 13
    for kind in KINDS:
        model = getattr(models, kind.model)
        assert issubclass(model, Record), kind
        for column in kind.columns:
            found = column.attribute in model.model_fields
            assert found or isinstance(getattr(model, column.attribute, None), property), column
        assert set(kind.inputs) <= {f.name for f in fields(kind)}, kind
