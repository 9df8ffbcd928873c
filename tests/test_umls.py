"""``tempmedbench_synonyms.Umls``, the terminology client in Python (SPEC section 11), against
the fake UTS serving the invented ``fixtures/umls`` files: typed, immutable results that keep
UTS's object; not found as a value; ``*_many`` answers in input order; the errors that raise;
the key in no ``repr``. Expected values are read off the invented RRF rows (quoted)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from helpers import BASE, FIXTURES, behind_responses
from tempmedbench_synonyms import (
    Answer,
    BadInputError,
    NotAuthorisedError,
    Outcome,
    Umls,
    UnavailableError,
)
from tempmedbench_synonyms import umls as umls_module
from tempmedbench_synonyms.lookups import KINDS, Atoms, Concept
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUts,
    FakeUtsData,
    FakeUtsServer,
    invented_rows,
)
from tempmedbench_synonyms.uts.models import (
    AtomRecord,
    ConceptRecord,
    Definition,
    HierarchyEntry,
    Relation,
    RootSource,
    SearchResult,
    SemanticTypeInfo,
    SourceAtomCluster,
)

META = FIXTURES / "umls"


@pytest.fixture
def fake() -> Iterator[FakeUts]:
    uts = FakeUts(FakeUtsData.from_meta(META, release="2099AA"), api_key=CANARY_KEY)
    with behind_responses(uts):
        yield uts


@pytest.fixture
def umls(fake: FakeUts, tmp_path: Path) -> Iterator[Umls]:
    with Umls("2099AA", api_key=CANARY_KEY, cache_dir=tmp_path / "cache", base_url=BASE) as u:
        yield u


def named_meta(tmp_path: Path) -> Path:
    """The invented META copied under a folder that names its release (2099AA)."""
    meta = tmp_path / "2099AA" / "META"
    shutil.copytree(META, meta, ignore=shutil.ignore_patterns("README.md"))
    return meta


@pytest.fixture(params=["uts", "meta"])
def either(request: pytest.FixtureRequest, fake: FakeUts, tmp_path: Path) -> Iterator[Umls]:
    """The fake UTS, or the same invented files as a local META (SPEC 12: the same answers)."""
    if request.param == "uts":
        with Umls("2099AA", api_key=CANARY_KEY, cache_dir=tmp_path / "cache",
                  base_url=BASE) as u:  # fmt: skip
            yield u
        return
    with Umls(meta=named_meta(tmp_path), index_dir=tmp_path / "index") as u:
        yield u
    assert fake.seen == []


def test_each_method_returns_typed_models_that_keep_utss_object(either: Umls) -> None:
    umls = either
    (hit,) = umls.search("zephyr fever")
    assert isinstance(hit, SearchResult)
    # MRCONSO.RRF: C9000001's SNOMEDCT_US PT "Zephyr fever"
    assert (hit.ui, hit.name, hit.root_source) == ("C9000001", "Zephyr fever", "SNOMEDCT_US")
    assert hit.raw["rootSource"] == "SNOMEDCT_US"
    with pytest.raises((TypeError, ValidationError)):
        hit.ui = "C0000000"  # type: ignore[misc]  (immutable)
    with pytest.raises(TypeError):
        hit.raw["ui"] = "C0000000"  # type: ignore[index]  (a read-only view)

    (cui,) = umls.cuis("MSH", "D990091")
    assert (cui.ui, cui.name) == ("C9000091", "Wind fever")

    walked = umls.crosswalk("SNOMEDCT_US", "9990191001", target_sabs=["MSH"])
    assert [(type(c), c.ui, c.name) for c in walked] == [
        (SourceAtomCluster, "D990090", "Meteoric Disorders")
    ]  # fmt: skip

    # MRDEF.RRF: C9000090 has an MSH and an NCI definition
    assert [(type(d), d.root_source) for d in umls.definitions("C9000090")] == [
        (Definition, "MSH"), (Definition, "NCI")
    ]  # fmt: skip

    # MRREL.RRF: 9990101009 CHD isa 9990192008 (SNOMEDCT_US)
    (rel,) = umls.relations(sab="SNOMEDCT_US", code="9990101009")
    assert isinstance(rel, Relation)
    assert (rel.relation_label, rel.additional_relation_label, rel.root_source) == (
        "CHD", "isa", "SNOMEDCT_US"
    )  # fmt: skip

    # MRSTY.RRF: C9000001 is T901 (B9.1) and T902 (B9.1.1)
    types = umls.semantic_types("C9000001", details=True)
    assert [(type(t), t.tui, t.tree_number) for t in types] == [
        (SemanticTypeInfo, "T901", "B9.1"), (SemanticTypeInfo, "T902", "B9.1.1")
    ]  # fmt: skip

    code = umls.source_concept("SNOMEDCT_US", "9990101009")
    assert isinstance(code, SourceAtomCluster)
    assert (code.name, code.obsolete, code.atom_count) == ("Zephyr fever", False, 7)

    # MRHIER.RRF: 9990101009's parent is 9990192008 "Wind fever"
    (parent,) = umls.hierarchy("parents", sab="SNOMEDCT_US", code="9990101009")
    assert isinstance(parent, HierarchyEntry)
    assert (parent.ui, parent.name) == ("9990192008", "Wind fever")

    sources = umls.sources()
    assert all(isinstance(s, RootSource) for s in sources)
    assert len(sources) == 11  # MRSAB.RRF: 12 rows, one an older version

    concept = umls.concept("C9000001")
    assert isinstance(concept, ConceptRecord)
    assert (concept.ui, concept.name, concept.atom_count) == ("C9000001", "Zephyr fever", 8)

    # MRCONSO.RRF: C9000001's English SNOMEDCT_US atoms with SUPPRESS N: A9000011..A9000013
    atoms = umls.atoms("C9000001", sab="SNOMEDCT_US")
    assert sorted(a.ui for a in atoms) == ["A9000011", "A9000012", "A9000013"]
    assert all(isinstance(a, AtomRecord) for a in atoms)
    (preferred,) = umls.atoms("C9000001", preferred=True)
    assert preferred.ui == "A9000011"
    assert [a.ui for a in umls.source_atoms("SNOMEDCT_US", "9990101009", preferred=True)] == [
        "A9000011"
    ]  # fmt: skip
    atom = umls.atom("A9000011")
    assert atom is not None and (atom.name, atom.cui) == ("Zephyr fever", "C9000001")


def test_not_found_is_none_for_one_object_and_empty_for_a_list(either: Umls) -> None:
    umls = either
    assert umls.concept("C0000001") is None
    assert umls.atom("A0000001") is None
    assert umls.source_concept("SNOMEDCT_US", "123") is None
    assert umls.search("nosuchword") == ()
    assert umls.definitions("C9000002") == ()  # MRDEF.RRF has none for C9000002


def test_a_lookup_that_cannot_be_asked_raises_bad_input(umls: Umls, fake: FakeUts) -> None:
    with pytest.raises(BadInputError, match="CUI 'XYZ' is not a UMLS concept identifier"):
        umls.concept("XYZ")
    with pytest.raises(TypeError, match="string must be a string, not int"):
        umls.search(42)  # type: ignore[arg-type]
    assert fake.seen == []


def test_many_yields_one_answer_an_input_in_input_order(umls: Umls, fake: FakeUts) -> None:
    answers = list(umls.concept_many(["C9000002", "XYZ", "C0000001", "C9000001"]))
    assert [(a.input, a.outcome, a.exit_code) for a in answers] == [
        ("C9000002", Outcome.FOUND, 0),
        ("XYZ", Outcome.BAD_INPUT, 2),
        ("C0000001", Outcome.NOT_FOUND, 1),
        ("C9000001", Outcome.FOUND, 0),
    ]
    assert all(isinstance(a, Answer) for a in answers)
    first = answers[0].results[0]
    assert isinstance(first, ConceptRecord)
    assert first.name == "Glimmer pox"  # MRCONSO.RRF: C9000002's PT
    assert answers[2].results == ()
    assert answers[2].message == "UMLS 2099AA has no concept C0000001 (404 Not Found)"
    cw = list(umls.crosswalk_many("SNOMEDCT_US", ["9990191001", "9990192008"]))
    # MRCONSO.RRF: 9990192008's concept C9000091 holds MSH D990091 only besides it
    assert [[c.ui for c in a.results] for a in cw] == [
        ["D990090", "C990090", "9990191001"], ["D990091"]
    ]  # fmt: skip


#: Every ``*_many`` method beside its single method, over inputs of the invented files: at least
#: one found, and one that is not (or cannot be asked).
MANY = {
    "search_many": (
        lambda u, xs: u.search_many(xs, sabs=["SNOMEDCT_US"]),
        lambda u, x: u.search(x, sabs=["SNOMEDCT_US"]),
        ["zephyr fever", "nosuchword"],
    ),
    "cuis_many": (
        lambda u, xs: u.cuis_many("MSH", xs),
        lambda u, x: u.cuis("MSH", x),
        ["D990091", "D999999"],
    ),
    "crosswalk_many": (
        lambda u, xs: u.crosswalk_many("SNOMEDCT_US", xs, target_sabs=["MSH"]),
        lambda u, x: u.crosswalk("SNOMEDCT_US", x, target_sabs=["MSH"]),
        ["9990191001", "123"],
    ),
    "definitions_many": (
        lambda u, xs: u.definitions_many(xs),
        lambda u, x: u.definitions(x),
        ["C9000090", "C9000002", "XYZ"],
    ),
    "relations_many": (
        lambda u, xs: u.relations_many(xs),
        lambda u, x: u.relations(x),
        ["C9000001", "C0000001", "XYZ"],
    ),
    "semantic_types_many": (
        lambda u, xs: u.semantic_types_many(xs, details=True),
        lambda u, x: u.semantic_types(x, details=True),
        ["C9000001", "C0000001", "XYZ"],
    ),
    "source_concept_many": (
        lambda u, xs: u.source_concept_many("SNOMEDCT_US", xs),
        lambda u, x: u.source_concept("SNOMEDCT_US", x),
        ["9990101009", "123"],
    ),
    "hierarchy_many": (
        lambda u, xs: u.hierarchy_many("parents", "SNOMEDCT_US", xs),
        lambda u, x: u.hierarchy("parents", sab="SNOMEDCT_US", code=x),
        ["9990101009", "123"],
    ),
    "concept_many": (
        lambda u, xs: u.concept_many(xs),
        lambda u, x: u.concept(x),
        ["C9000001", "C0000001", "XYZ"],
    ),
    "atoms_many": (
        lambda u, xs: u.atoms_many(xs, sab="SNOMEDCT_US"),
        lambda u, x: u.atoms(x, sab="SNOMEDCT_US"),
        ["C9000001", "C0000001", "XYZ"],
    ),
    "source_atoms_many": (
        lambda u, xs: u.source_atoms_many("SNOMEDCT_US", xs, preferred=True),
        lambda u, x: u.source_atoms("SNOMEDCT_US", x, preferred=True),
        ["9990101009", "123"],
    ),
    "atom_many": (
        lambda u, xs: u.atom_many(xs),
        lambda u, x: u.atom(x),
        ["A9000011", "A0000001", "XYZ"],
    ),
}


def test_every_many_method_is_in_the_table() -> None:
    # answer_many takes (input, lookup) pairs of any kind: the methods below are made of it.
    assert sorted(MANY) == sorted(
        n for n in dir(Umls) if n.endswith("_many") and n != "answer_many"
    )


@pytest.mark.parametrize("name", sorted(MANY))
def test_each_many_method_answers_each_input_as_its_single_method(either: Umls, name: str) -> None:
    umls = either
    """In input order; a found input's results are what the single method returns, a missing
    one is not found (the single method's empty answer or None), one that cannot be asked is
    bad input (the single method raises)."""
    many, single, inputs = MANY[name]
    answers = list(many(umls, inputs))
    assert [a.input.rpartition(" ")[2] for a in answers] == [x.rpartition(" ")[2] for x in inputs]
    assert [a.outcome for a in answers] == [Outcome.FOUND] + [
        Outcome.BAD_INPUT if x == "XYZ" else Outcome.NOT_FOUND for x in inputs[1:]
    ]
    for answer, x in zip(answers, inputs, strict=True):
        if answer.outcome is Outcome.BAD_INPUT:
            with pytest.raises(BadInputError):
                single(umls, x)
            continue
        expected = single(umls, x)
        if answer.outcome is Outcome.NOT_FOUND:
            assert expected in (None, ()) and answer.results == ()
        else:
            assert expected and answer.results == (
                expected if isinstance(expected, tuple) else (expected,)
            )


def test_a_refused_key_raises_from_the_method_and_from_many(fake: FakeUts, tmp_path: Path) -> None:
    with Umls("2099AA", api_key="wrong", cache_dir=tmp_path / "c", base_url=BASE) as umls:
        with pytest.raises(NotAuthorisedError):
            umls.concept("C9000001")
        with pytest.raises(NotAuthorisedError):
            list(umls.definitions_many(["C9000001", "C9000090"]))


def test_a_wrong_base_url_raises_unavailable_naming_it_not_not_authorised(tmp_path: Path) -> None:
    """audit-client M1: the keyless ``/metadata`` check answered 401 behind a wrong base URL."""
    fake = FakeUts(FakeUtsData.from_meta(META, release="2099AA"), api_key=CANARY_KEY)
    with (
        behind_responses(fake, base_url="https://uts.invalid"),
        Umls(
            api_key=CANARY_KEY, cache_dir=tmp_path / "c", base_url="https://uts.invalid/xyz"
        ) as umls,
    ):
        with pytest.raises(UnavailableError) as raised:
            umls.concept("C9000001")
        with pytest.raises(UnavailableError) as many:
            list(umls.definitions_many(["C9000001", "C9000090"]))
    for err in (raised.value, many.value):
        assert type(err) is UnavailableError and err.exit_code == 4
        assert str(err) == (
            "https://uts.invalid/xyz answered HTTP 401 for /metadata/current/sources, a request "
            "sent without the API key: this does not look like the UMLS REST API"
        )
        assert err.hint == (
            "check base_url (or UMLS_BASE_URL): the default is https://uts-ws.nlm.nih.gov/rest, "
            "and a UTS base URL ends in /rest"
        )


def test_an_unknown_cui_in_current_is_none_after_two_requests(
    fake: FakeUts, tmp_path: Path
) -> None:
    """audit-client L13: the probe's 404 is the concept's answer; each call asks anew."""
    with Umls(api_key=CANARY_KEY, cache_dir=tmp_path / "c", base_url=BASE) as umls:
        assert umls.concept("C9999999") is None
        assert umls.semantic_types("C9999999") == ()
    assert [s.path for s in fake.seen] == [
        "/content/current/CUI/C9999999", "/metadata/current/sources",
        "/content/current/CUI/C9999999",  # the second call asks again (current is served)
    ]  # fmt: skip


def test_offline_without_the_answer_cached_is_unavailable(tmp_path: Path) -> None:
    with Umls("2099AA", offline=True, cache_dir=tmp_path / "c", base_url=BASE) as umls:
        with pytest.raises(UnavailableError, match=r"^offline=True, and the cache does not"):
            umls.concept("C9000001")


def test_the_key_is_in_no_repr_and_options_are_checked_at_once(tmp_path: Path) -> None:
    umls = Umls(api_key=CANARY_KEY, cache_dir=tmp_path, base_url=BASE)
    assert repr(umls) == f"Umls(release='current', base_url={BASE!r})"
    assert CANARY_KEY not in repr(umls) + str(vars(umls))
    with pytest.raises(BadInputError, match=r"^rate=500 is out of range"):
        Umls(rate=500, cache_dir=tmp_path)
    with pytest.raises(BadInputError, match="is not a UMLS release name"):
        Umls("2025ab")
    with pytest.raises(TypeError, match="release must be a string, not int"):
        Umls(2025)  # type: ignore[arg-type]


#: Each argument of ``Umls`` in the signature's order, with a value of the wrong type.
WRONG = {
    "release": 2025, "api_key": 5, "api_key_file": 1.5, "mrconso": 7, "meta": 7, "index_dir": 7,
    "cache_dir": 1.5, "rate": "15", "workers": 2.5, "timeout": [30], "offline": "no",
    "refresh": 1, "base_url": 123, "progress": "yes",
}  # fmt: skip


def test_wrong_types_are_reported_in_the_signatures_order_before_any_value() -> None:
    """Two arguments of the wrong type: the TypeError names the one first in the signature
    (``api_key`` too, which is no ``UtsOptions`` field), as ``regenerate``'s keywords, and
    before any value is checked (a release name of the wrong form)."""
    import inspect

    assert list(WRONG) == list(inspect.signature(Umls).parameters)
    names = list(WRONG)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            with pytest.raises(TypeError) as raised:
                Umls(**{first: WRONG[first], second: WRONG[second]})
            assert str(raised.value).startswith(f"{first} must be "), (first, second)
    with pytest.raises(TypeError, match=r"^api_key must be a string, not int$"):
        Umls("2025ab", api_key=5)  # type: ignore[arg-type]


class _Text(str):
    """A ``str`` subclass: its methods may say anything (here, its ``strip``)."""

    def strip(self, chars: str | None = None) -> str:
        return "something else"


@pytest.mark.parametrize("name", ["release", "api_key", "base_url"])
def test_a_str_subclass_is_refused_like_any_other_wrong_type(name: str) -> None:
    """``Umls``'s strings are exactly ``str``, as every option of ``UtsOptions`` and
    ``regenerate``'s ``umls_release``: a subclass is a TypeError naming the argument."""
    value = _Text("2099AA" if name == "release" else CANARY_KEY if name == "api_key" else BASE)
    with pytest.raises(TypeError) as raised:
        Umls(**{name: value})
    assert str(raised.value) == f"{name} must be a string, not _Text"


def test_the_signature_is_spec_11s() -> None:
    """``Umls(release="current", *, api_key=None, ...)``: SPEC 11's names and defaults (a
    ``progress`` keyword added), and every method mirroring a command."""
    import inspect

    params = inspect.signature(Umls).parameters
    assert [(p.name, p.kind, p.default) for p in params.values()] == [
        ("release", inspect.Parameter.POSITIONAL_OR_KEYWORD, "current"),
        *((name, inspect.Parameter.KEYWORD_ONLY, default) for name, default in (
            ("api_key", None), ("api_key_file", None), ("mrconso", None), ("meta", None),
            ("index_dir", None), ("cache_dir", None), ("rate", 15), ("workers", 8),
            ("timeout", 30), ("offline", False), ("refresh", False), ("base_url", None),
            ("progress", False),
        )),
    ]  # fmt: skip
    methods = ("search", "cuis", "crosswalk", "definitions", "relations", "semantic_types",
               "source_concept", "hierarchy", "sources", "concept", "atoms", "source_atoms",
               "atom")  # fmt: skip
    assert all(callable(getattr(Umls, m, None)) for m in methods)
    assert [f for f in Answer.__dataclass_fields__][:4] == ["input", "outcome", "results",
                                                            "message"]  # fmt: skip


def test_semantic_types_have_a_tui_and_no_tree_number_without_details(umls: Umls) -> None:
    # MRSTY.RRF: C9000001 is T901 "Invented Disorder" (B9.1) and T902 (B9.1.1)
    plain = umls.semantic_types("C9000001")
    assert [(t.name, t.tui, t.tree_number) for t in plain] == [
        ("Invented Disorder", "T901", None), ("Invented Weather Finding", "T902", None),
    ]  # fmt: skip
    detailed = umls.semantic_types("C9000001", details=True)
    assert [(t.tui, t.tree_number) for t in detailed] == [("T901", "B9.1"), ("T902", "B9.1.1")]


def test_search_loses_no_result_when_the_server_pages_smaller_than_asked(tmp_path: Path) -> None:
    """audit-client H1, in Python: given pages of 3 (the envelope says so), every result."""
    # invented_rows: 11 concepts C9000001-C9000011, each with a SNOMEDCT_US PT "invented ..."
    rows = invented_rows(11, atoms_per_concept=1)
    fake = FakeUts(FakeUtsData.from_lines(rows), api_key=CANARY_KEY, max_page_size=3)
    with behind_responses(fake), Umls("2099AA", api_key=CANARY_KEY, cache_dir=tmp_path / "c",
                                      base_url=BASE) as umls:  # fmt: skip
        every = umls.search("invented", limit=0)
        first = umls.search("invented")  # the default limit, 25: not met
    assert [r.ui for r in every] == [f"C90000{k:02d}" for k in range(1, 12)]
    assert first == every
    assert [dict(s.params).get("pageNumber") for s in fake.seen] == [None, "2", "3", "4"] * 2


def test_the_examples_of_the_docstrings_run_against_the_fake(tmp_path: Path) -> None:
    import doctest

    import tempmedbench_synonyms.umls as module

    fake = FakeUts(FakeUtsData.from_meta(META, release="2099AA"), api_key="invented-key")
    with FakeUtsServer(fake) as server:
        globs = {"fake_url": server.base_url, "cache": tmp_path / "cache"}
        failed, tried = doctest.testmod(module, extraglobs=globs, report=True)
    assert (failed, tried) == (0, 1)  # the Umls example (one with block)
    assert [s.path for s in fake.seen] == [
        "/search/2099AA",
        "/crosswalk/2099AA/source/SNOMEDCT_US/9990191001",
        "/content/2099AA/source/SNOMEDCT_US/9990101009/parents",
        "/content/2099AA/CUI/C0000001",
        "/metadata/2099AA/sources",
        "/content/2099AA/CUI/C9000001",
    ]  # fmt: skip  (XYZ is never sent)


def test_a_local_meta_answers_every_batch_from_one_index_with_no_network(
    fake: FakeUts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One ``LocalIndex`` for the life of a ``Umls``: a notebook's loop of questions opens it
    once; each --json line names it (``source``)."""
    from tempmedbench_synonyms.mrconso import index

    opened: list[Path] = []
    real = index.LocalIndex.__init__

    def counted(self: index.LocalIndex, meta: Path, **keywords: Any) -> None:
        opened.append(meta)
        real(self, meta, **keywords)

    monkeypatch.setattr(index.LocalIndex, "__init__", counted)
    meta = named_meta(tmp_path)
    with Umls(meta=meta, index_dir=tmp_path / "index") as umls:
        for _ in range(3):
            (found,) = umls.concept_many(["C9000001"])
            assert (found.outcome, found.release, found.source) == (
                Outcome.FOUND, "2099AA", umls._backend._index.where  # type: ignore[attr-defined]
            )  # fmt: skip
            assert umls.definitions("C9000001")[0].root_source == "MTH"
        assert repr(umls) == f"Umls(release='current', meta={str(meta)!r})"
    assert opened == [meta]
    assert fake.seen == []


def test_a_local_umls_is_asked_from_several_threads_at_once(tmp_path: Path) -> None:
    """One connection, one question at a time (a lock): threads sharing a ``Umls`` each get
    their own answers."""
    import threading

    got: list[tuple[str, str]] = []
    with Umls(meta=named_meta(tmp_path), index_dir=tmp_path / "index") as umls:

        def ask(cui: str, name: str) -> None:
            for _ in range(30):
                concept = umls.concept(cui)
                got.append((cui, concept.name if concept else ""))

        # MRCONSO.RRF: C9000001 "Zephyr fever", C9000002 "Glimmer pox"
        threads = [threading.Thread(target=ask, args=pair) for pair in
                   [("C9000001", "Zephyr fever"), ("C9000002", "Glimmer pox")] * 2]  # fmt: skip
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert sorted(set(got)) == [("C9000001", "Zephyr fever"), ("C9000002", "Glimmer pox")]
    assert len(got) == 120


def test_a_file_the_meta_lacks_is_bad_input_naming_it(tmp_path: Path) -> None:
    """``mrconso=PATH`` is a META of that MRCONSO.RRF alone (SPEC 12)."""
    mrconso = named_meta(tmp_path) / "MRCONSO.RRF"
    with Umls(mrconso=mrconso, index_dir=tmp_path / "index") as umls:
        assert [a.ui for a in umls.atoms("C9000002", sab="SNOMEDCT_US")] == [
            "A9000021", "A9000022", "A9000023"
        ]  # fmt: skip
        for ask, needed in (
            (lambda: umls.definitions("C9000001"), "umls definitions needs MRDEF.RRF"),
            (lambda: umls.relations("C9000001"), "umls relations needs MRREL.RRF"),
            (lambda: umls.semantic_types("C9000001"), "umls semantic-types needs MRSTY.RRF"),
            (lambda: umls.hierarchy("parents", aui="A9000011"), "umls hierarchy needs MRHIER.RRF"),
            (lambda: umls.search("fever", semantic_types=["T901"]),
             "umls search semantic_types needs MRSTY.RRF"),
        ):  # fmt: skip
            with pytest.raises(BadInputError) as raised:
                ask()
            assert str(raised.value) == f"{mrconso}: {needed}, and it holds none"
        # without MRSAB.RRF, one source per SAB of MRCONSO.RRF
        assert len(umls.sources()) == 11  # MRCONSO.RRF's SABs


def test_meta_and_mrconso_together_and_a_contradicted_release_are_bad_input(
    tmp_path: Path,
) -> None:
    meta = named_meta(tmp_path)
    with pytest.raises(BadInputError) as raised:
        Umls(meta=meta, mrconso=meta / "MRCONSO.RRF")
    assert str(raised.value) == "meta and mrconso contradict each other: give one"
    with pytest.raises(BadInputError) as raised:
        Umls("2098AA", meta=meta, index_dir=tmp_path / "index")
    assert str(raised.value) == (f"{meta}: release=2098AA is not the release its names say, 2099AA")
    assert raised.value.hint == "leave release out (current: the files' own), or give 2099AA"
    with Umls("2099AA", meta=meta, index_dir=tmp_path / "index") as same:
        assert same.concept("C9000001") is not None
    unnamed = tmp_path / "META"
    shutil.copytree(meta, unnamed)
    with Umls(meta=unnamed, index_dir=tmp_path / "index") as umls:  # no release: null
        (found,) = umls.concept_many(["C9000001"])
        assert (found.release, found.results[0].raw["atoms"]) == (
            None, "https://uts-ws.nlm.nih.gov/rest/content/current/CUI/C9000001/atoms"
        )  # fmt: skip
    with Umls("2097AB", meta=unnamed, index_dir=tmp_path / "index") as umls:  # names it
        (found,) = umls.concept_many(["C9000001"])
        assert (found.release, found.results[0].raw["atoms"]) == (
            "2097AB", "https://uts-ws.nlm.nih.gov/rest/content/2097AB/CUI/C9000001/atoms"
        )  # fmt: skip


# -- streaming: a bounded look-ahead (issue 22 item 3) -----------------------------------------


def _counting(values: Iterator[str], most: int) -> tuple[Iterator[str], list[int]]:
    """``values`` as a generator that counts how many were pulled (``pulled[0]``) and fails
    when pulled past ``most`` (so that reading it whole fails, and does not hang)."""
    pulled = [0]

    def gen() -> Iterator[str]:
        for value in values:
            pulled[0] += 1
            if pulled[0] > most:
                raise AssertionError(f"read past the look-ahead of {most}")
            yield value

    return gen(), pulled


def test_many_answers_an_endless_generator_after_one_chunk(umls: Umls, fake: FakeUts) -> None:
    import itertools

    from tempmedbench_synonyms.terminology import MANY_AHEAD

    # every input the same CUI: asked once, the rest of the chunk from the same answer
    endless, pulled = _counting(itertools.repeat("C9000001"), MANY_AHEAD)
    many = umls.concept_many(endless)
    first = next(many)
    assert (first.input, first.outcome) == ("C9000001", Outcome.FOUND)
    assert pulled[0] == MANY_AHEAD  # the look-ahead, not the (endless) whole
    many.close()
    assert [s.path for s in fake.seen] == ["/content/2099AA/CUI/C9000001"]

    counted, pulled = _counting((f"XYZ{n}" for n in itertools.count()), MANY_AHEAD)
    asked = umls.answer_many((c, Concept(c)) for c in counted)
    assert next(asked).input == "XYZ0"
    assert pulled[0] == MANY_AHEAD
    asked.close()


def test_many_streams_in_chunks_in_order_the_cache_shared_across_them(
    umls: Umls, fake: FakeUts, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempmedbench_synonyms import terminology

    monkeypatch.setattr(terminology, "MANY_AHEAD", 2)
    inputs = ["C9000001", "C9000002", "C9000001", "XYZ", "C9000002"]
    answers = list(umls.concept_many(iter(inputs)))
    assert [(a.input, a.outcome) for a in answers] == [
        ("C9000001", Outcome.FOUND), ("C9000002", Outcome.FOUND), ("C9000001", Outcome.FOUND),
        ("XYZ", Outcome.BAD_INPUT), ("C9000002", Outcome.FOUND),
    ]  # fmt: skip
    # a later chunk's repeats come from the cache: each CUI asked once
    assert sorted(s.path for s in fake.seen) == [
        "/content/2099AA/CUI/C9000001", "/content/2099AA/CUI/C9000002"
    ]  # fmt: skip


def test_a_pipe_is_read_once_and_a_second_batch_asks_the_same_index(
    fake: FakeUts, tmp_path: Path
) -> None:
    """SPEC 12: a pipe is read once into a temporary index, which a second batch (a second call,
    or a generator's next chunk) asks again: it never opens the pipe twice."""
    import os
    import threading

    fifo = tmp_path / "MRCONSO.RRF"
    os.mkfifo(fifo)
    rows = (META / "MRCONSO.RRF").read_bytes()

    def write(data: bytes) -> None:
        with open(fifo, "wb") as out:  # waits for the reader to open it
            out.write(data)

    writer = threading.Thread(target=write, args=(rows,), daemon=True)
    writer.start()
    with Umls(mrconso=fifo, index_dir=tmp_path / "index") as umls:
        assert umls.atom("A9000014") is not None
        writer.join(timeout=10)
        assert umls.atom("A9000021") is not None
    assert fake.seen == []


# -- identifiers, not links: one rule for the typed models and the table (issue 22 item 7) ------


def test_an_atom_shaped_hierarchy_entry_is_its_code_as_the_table_shows_it(
    umls: Umls, fake: FakeUts, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from tempmedbench_synonyms.cli.umls import umls_app

    # MRHIER.RRF: HL7V3.0 AMB (A9000703)'s parent is A9000921, code _InventedEncounterCode; an
    # atom's hierarchy is Atoms (SPEC 12: a source code's is clusters, HL7's too)
    (parent,) = umls.hierarchy("parents", aui="A9000703")
    assert parent.class_type == "Atom"
    assert (parent.ui, parent.aui, parent.name, parent.root_source) == (
        "_InventedEncounterCode", "A9000921", "InventedEncounterCode", "HL7V3.0",
    )  # fmt: skip
    env = {"UMLS_BASE_URL": BASE, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cli-cache"),
           "UMLS_API_KEY": CANARY_KEY}  # fmt: skip
    args = ["hierarchy", "--aui", "A9000703", "--parents", "--umls-release", "2099AA"]
    result = CliRunner().invoke(umls_app, args, env=env)
    assert result.exit_code == 0, result.stderr
    assert [line.split() for line in result.stdout.splitlines()] == [
        ["UI", "NAME", "SOURCE", "AUI"],
        [parent.ui, parent.name, parent.root_source, parent.aui],
    ]


def test_relation_ends_and_semantic_types_are_identifiers(umls: Umls) -> None:
    # MRREL.RRF: 9990101009 CHD isa 9990192008 (SNOMEDCT_US)
    (rel,) = umls.relations(sab="SNOMEDCT_US", code="9990101009")
    assert (rel.related_from_id, rel.related_id) == ("9990101009", "9990192008")
    # MRSTY.RRF: C9000001 is T901 and T902; without details the TUI is read off the uri
    assert [t.ui for t in umls.semantic_types("C9000001")] == ["T901", "T902"]


def test_the_table_and_the_model_name_every_entry_shape_alike() -> None:
    from tempmedbench_synonyms.cli.umls import _rows
    from tempmedbench_synonyms.lookups import Hierarchy
    from tempmedbench_synonyms.uts.models import read_results

    link = "https://uts.invalid/rest/content/2099AA/source"
    results = (
        {"classType": "Atom", "ui": "A9000921", "name": "Invented", "rootSource": "HL7V3.0",
         "code": f"{link}/HL7V3.0/AMB%2F9%20%25x", "concept": "NONE"},
        {"classType": "SourceAtomCluster", "ui": "9990192008", "name": "Wind fever",
         "rootSource": "SNOMEDCT_US"},
        # before 2016: a relation whose relatedConcept is the code (its own ui is no code)
        {"classType": "AtomClusterAtomClusterRelation", "ui": "R0123abcd", "rootSource": "INV",
         "relatedConcept": f"{link}/INV/1000000", "relatedConceptName": "Invented root"},
    )  # fmt: skip
    lookup = Hierarchy("parents", "INV", "1")
    answer = Answer("INV 1", Outcome.FOUND, results)
    models = read_results(answer, lookup)
    assert (
        _rows(lookup, answer)
        == [
            [m.ui or "", m.name or "", m.root_source or "", m.aui or ""]  # type: ignore[attr-defined]
            for m in models
        ]
        == [
            ["AMB/9 %x", "Invented", "HL7V3.0", "A9000921"],
            ["9990192008", "Wind fever", "SNOMEDCT_US", ""],
            ["1000000", "Invented root", "INV", ""],
        ]
    )


# -- the Python API's own words and types (issue 22 item 13) -------------------------------------

#: Each ``*_many`` method called with one str where its inputs go, and the argument it names.
STR_INPUTS = {
    "search_many": ("strings", lambda u: u.search_many("zephyr")),
    "cuis_many": ("codes", lambda u: u.cuis_many("MSH", "D990091")),
    "crosswalk_many": ("codes", lambda u: u.crosswalk_many("SNOMEDCT_US", "9990191001")),
    "definitions_many": ("cuis", lambda u: u.definitions_many("C9000090")),
    "relations_many": ("cuis", lambda u: u.relations_many("C9000001")),
    "semantic_types_many": ("cuis", lambda u: u.semantic_types_many("C9000001")),
    "source_concept_many": ("codes", lambda u: u.source_concept_many("SNOMEDCT_US", "1")),
    "hierarchy_many": ("codes", lambda u: u.hierarchy_many("parents", "SNOMEDCT_US", "1")),
    "concept_many": ("cuis", lambda u: u.concept_many("C9000001")),
    "atoms_many": ("cuis", lambda u: u.atoms_many("C9000001")),
    "source_atoms_many": ("codes", lambda u: u.source_atoms_many("SNOMEDCT_US", "1")),
    "atom_many": ("auis", lambda u: u.atom_many("A9000011")),
}


@pytest.mark.parametrize("method", sorted(STR_INPUTS))
def test_a_str_as_the_inputs_of_many_is_refused_naming_the_argument(
    umls: Umls, fake: FakeUts, method: str
) -> None:
    name, call = STR_INPUTS[method]
    with pytest.raises(TypeError) as raised:
        call(umls)  # at the call, before any answer is asked for
    assert str(raised.value) == (
        f"{name} must be an iterable of strings, not one str (read letter by letter): "
        f"put it in a list"
    )
    assert fake.seen == []
    assert sorted(STR_INPUTS) == sorted(MANY)


def test_a_str_where_sources_or_labels_go_is_one_of_them(umls: Umls, fake: FakeUts) -> None:
    walked = umls.crosswalk("SNOMEDCT_US", "9990191001", target_sabs="MSH")
    assert [c.ui for c in walked] == ["D990090"]
    assert [dict(s.params)["targetSource"] for s in fake.seen] == ["MSH"]
    assert [d.root_source for d in umls.definitions("C9000090", sabs="NCI")] == ["NCI"]
    many = umls.crosswalk_many("SNOMEDCT_US", ["9990191001"], target_sabs="MSH")
    assert [[c.ui for c in a.results] for a in many] == [["D990090"]]


def test_a_value_of_the_wrong_type_is_a_type_error_naming_the_argument(
    umls: Umls, fake: FakeUts
) -> None:
    calls = [
        (lambda: umls.atom(123), "aui must be a string, not int"),
        (lambda: umls.cuis("SNOMEDCT_US", 22298006), "code must be a string, not int"),
        (lambda: umls.crosswalk("LNC", 91915), "code must be a string, not int"),
        (lambda: umls.concept(None), "cui must be a string, not NoneType"),
        (lambda: umls.cuis_many(None, ["1"]), "sab must be a string, not NoneType"),
        (lambda: umls.search("zephyr", limit="5"), "limit must be a whole number or None, not str"),
        (lambda: umls.search("zephyr", limit=True),
         "limit must be a whole number or None, not bool"),
        (lambda: umls.search("zephyr", sabs=5, limit="5"),  # the limit is checked first
         "limit must be a whole number or None, not str"),
        (lambda: umls.concept_many(5), "cuis must be an iterable of strings, not int"),
        (lambda: umls.crosswalk("SNOMEDCT_US", "1", target_sabs=[1]),
         "target_sabs must hold strings, not int"),
        (lambda: umls.atoms_many(["C9000001"], limit=2.5),
         "limit must be a whole number or None, not float"),
        (lambda: umls.search("zephyr", language=5), "language must be a string, not int"),
        # a flag took any value as its truth (preferred="false" gave the preferred atom); a choice
        # that was no string failed in a regular expression, naming nothing
        (lambda: umls.atoms("C9000001", preferred="false"),
         "preferred must be True or False, not str"),
        (lambda: umls.atoms_many(["C9000001"], preferred=0),
         "preferred must be True or False, not int"),
        (lambda: umls.source_atoms("SNOMEDCT_US", "1", preferred=None),
         "preferred must be True or False, not NoneType"),
        (lambda: umls.semantic_types("C9000001", details="no"),
         "details must be True or False, not str"),
        (lambda: umls.semantic_types_many(["C9000001"], details=1),
         "details must be True or False, not int"),
        (lambda: umls.search("zephyr", partial="no"), "partial must be True or False, not str"),
        (lambda: umls.search_many(["zephyr"], include_obsolete=1),
         "include_obsolete must be True or False, not int"),
        (lambda: umls.search("zephyr", include_suppressible=[]),
         "include_suppressible must be True or False, not list"),
        (lambda: umls.search("zephyr", search_type=5), "search_type must be a string, not int"),
        (lambda: umls.search("zephyr", input_type=b"code"),
         "input_type must be a string, not bytes"),
        (lambda: umls.search("zephyr", return_id_type=1),
         "return_id_type must be a string, not int"),
        (lambda: umls.hierarchy(5, sab="MSH", code="D1"), "direction must be a string, not int"),
        (lambda: umls.hierarchy_many(None, "MSH", ["D1"]),
         "direction must be a string, not NoneType"),
    ]  # fmt: skip
    for call, message in calls:
        with pytest.raises(TypeError) as raised:
            call()
        assert str(raised.value) == message
    assert fake.seen == []


def test_every_field_of_every_kind_is_checked_by_its_type() -> None:
    """The API checks each argument by the type of the field it fills: a field of a type with
    no check would let any value through (as every flag did)."""
    unchecked = [(k.__name__, f.name, f.type) for k in KINDS for f in fields(k)
                 if f.type not in umls_module._CHECKS]  # fmt: skip
    assert unchecked == []


def test_a_non_string_inside_many_is_one_bad_input_answer(umls: Umls, fake: FakeUts) -> None:
    answers = list(umls.concept_many(["C9000001", None, 7, "XYZ"]))
    assert [(a.input, a.outcome, a.exit_code) for a in answers] == [
        ("C9000001", Outcome.FOUND, 0), ("None", Outcome.BAD_INPUT, 2),
        ("7", Outcome.BAD_INPUT, 2), ("XYZ", Outcome.BAD_INPUT, 2),
    ]  # fmt: skip
    assert [a.message for a in answers[1:3]] == [
        "cuis holds None, not a string: each input must be a string",
        "cuis holds 7, not a string: each input must be a string",
    ]
    (code,) = umls.cuis_many("MSH", [None])
    assert (code.input, code.outcome) == ("MSH None", Outcome.BAD_INPUT)
    assert [s.path for s in fake.seen] == ["/content/2099AA/CUI/C9000001"]


def test_messages_name_the_python_arguments_not_the_flags(umls: Umls, tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as raised:
        Umls(rate=500, cache_dir=tmp_path)
    assert str(raised.value) == (
        "rate=500 is out of range: it is above 20 requests a second, the most the UMLS "
        "Terminology Services terms of use allow from one IP address"
    )
    assert raised.value.hint == (
        "use rate=20 or less (the default, 15, leaves room for other UTS clients)"
    )
    with pytest.raises(BadInputError) as raised:
        Umls(offline=True, refresh=True, cache_dir=tmp_path)
    assert str(raised.value) == (
        "offline=True and refresh=True contradict each other: refresh=True fetches again, "
        "offline=True never fetches"
    )
    with pytest.raises(BadInputError) as raised:
        umls.search("zephyr", limit=-1)
    assert str(raised.value) == "limit=-1 is out of range: give 0 (no cap) or more"
    (cut,) = umls.search_many(["fever"], limit=1)
    assert cut.message == "1 result for words search for 'fever', UMLS 2099AA; limit=1 cut it"
    # an input's own text is left as it is: only the flags of the messages are renamed
    (none,) = umls.search_many(["--offline nothing"])
    assert none.message == (
        "UMLS 2099AA has no results for the words search for '--offline nothing'"
    )
    assert none.hint == (
        "check the spelling, or try another search_type (normalizedWords matches word forms) "
        "or fewer sabs"
    )
    with Umls("2099AA", offline=True, cache_dir=tmp_path / "c", base_url=BASE) as offline:
        with pytest.raises(UnavailableError) as missed:
            offline.concept("C9000002")
        assert str(missed.value) == (
            "offline=True, and the cache does not hold the answer to /content/2099AA/CUI/C9000002"
        )
        assert missed.value.hint == (
            "run once without offline=True to fill the cache (a regeneration can also read a "
            "local MRCONSO.RRF with mrconso=PATH)"
        )


def test_a_list_says_whether_the_limit_cut_it(umls: Umls) -> None:
    # MRCONSO.RRF: "fever" is in Zephyr fever (C9000001) and Wind fever (C9000091)
    cut = umls.search("fever", limit=1)
    assert ([h.ui for h in cut], cut.truncated) == (["C9000001"], True)
    whole = umls.search("fever")
    assert ([h.ui for h in whole], whole.truncated) == (["C9000001", "C9000091"], False)
    assert isinstance(whole, tuple) and whole == tuple(whole)
    none = umls.definitions("C9000002")
    assert (none, none.truncated) == ((), False)


def test_an_empty_api_key_is_refused_before_any_request(fake: FakeUts, tmp_path: Path) -> None:
    for empty in ("", "  \n"):
        with pytest.raises(BadInputError) as raised:
            Umls("2099AA", api_key=empty, cache_dir=tmp_path, base_url=BASE)
        assert str(raised.value) == "api_key is empty"
        assert raised.value.hint == (
            "give your UMLS API key (https://uts.nlm.nih.gov/uts/profile), or leave api_key "
            "out to read UMLS_API_KEY or UMLS_API_KEY_FILE"
        )
    assert fake.seen == []
    assert not (tmp_path / "rate").exists() and list(tmp_path.iterdir()) == []


def test_a_closed_progress_stream_is_bad_input_naming_progress(
    fake: FakeUts, tmp_path: Path
) -> None:
    import io

    closed = io.StringIO()
    closed.close()
    with pytest.raises(BadInputError) as raised:
        Umls("2099AA", progress=closed, cache_dir=tmp_path, base_url=BASE)
    assert str(raised.value) == "progress is a closed stream"
    assert raised.value.hint == "give an open text stream, True (stderr) or False (none)"
    stream = io.StringIO()
    with Umls("2099AA", api_key=CANARY_KEY, progress=stream, cache_dir=tmp_path,
              base_url=BASE) as umls:  # fmt: skip
        stream.close()  # closed after: said at the next batch, before anything is asked
        with pytest.raises(BadInputError, match=r"^progress is a closed stream$"):
            list(umls.concept_many(["C9000001", "C9000002"]))
    assert fake.seen == []


def test_many_ends_each_batch_with_its_last_progress_line(fake: FakeUts, tmp_path: Path) -> None:
    import io

    stream = io.StringIO()
    with Umls("2099AA", api_key=CANARY_KEY, progress=stream, cache_dir=tmp_path,
              base_url=BASE) as umls:  # fmt: skip
        answers = list(umls.concept_many(["C9000001", None, "C9000002"]))
    assert [a.outcome for a in answers] == [Outcome.FOUND, Outcome.BAD_INPUT, Outcome.FOUND]
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith("UMLS 2099AA: 2/2 inputs, 0 cache hits, 2 requests, done in ")
    assert CANARY_KEY not in stream.getvalue()


def test_ctrl_c_while_reading_the_inputs_ends_the_stream_after_the_answers_before(
    umls: Umls, fake: FakeUts, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempmedbench_synonyms import terminology

    monkeypatch.setattr(terminology, "MANY_AHEAD", 2)

    def inputs() -> Iterator[str]:
        yield from ("C9000001", "C9000002", "C9000090")
        raise KeyboardInterrupt  # Ctrl-C while the caller reads its next input

    given = []
    with pytest.raises(KeyboardInterrupt):
        for answer in umls.concept_many(inputs()):
            given.append((answer.input, answer.outcome))
    assert given == [("C9000001", Outcome.FOUND), ("C9000002", Outcome.FOUND)]
    assert len(fake.seen) == 2  # the third input's chunk was never asked


def test_a_command_hands_its_options_whole_and_its_messages_name_the_flags(
    fake: FakeUts, tmp_path: Path
) -> None:
    """``Umls.of``: the options a command parsed, taken as they are (``cli.umls``); its
    messages name the command line's flags, where ``Umls(...)``'s name the keywords."""
    from tempmedbench_synonyms.uts.options import Local, UtsOptions

    options = UtsOptions(base_url=BASE, cache_dir=tmp_path / "c", offline=True)
    with Umls.of(options, "2099AA") as umls:
        assert (umls.options, umls.release) == (options, "2099AA")
        assert umls.options is options
        with pytest.raises(UnavailableError, match=r"^--offline, and the cache does not hold"):
            list(umls.answer_many([("C9000002", Concept("C9000002"))]))
        assert umls.summary() == "0 requests sent, 0 answers from the cache"
        assert umls.warnings() == []
    with pytest.raises(BadInputError) as raised:
        Umls.of(UtsOptions(rate=500, cache_dir=tmp_path))
    assert str(raised.value) == (
        "--rate 500 is out of range: it is above 20 requests a second, the most the UMLS "
        "Terminology Services terms of use allow from one IP address"
    )
    local_files = Local(mrconso=named_meta(tmp_path) / "MRCONSO.RRF", index_dir=tmp_path / "i")
    with Umls.of(UtsOptions(rate=500), "2099AA", local=local_files) as local:
        (found,) = local.answer_many([("C9000001", Atoms("C9000001", "SNOMEDCT_US"))])
        assert (found.outcome, local.summary(), local.warnings()) == (Outcome.FOUND, None, [])
    assert fake.seen == []


def test_search_many_names_itself_for_a_keyword_search_does_not_take() -> None:
    """``search_many`` takes ``search``'s keywords; another (``string`` too: the strings are its
    first argument) is the TypeError Python gives any method, naming ``search_many``."""
    umls = Umls(meta=FIXTURES / "umls")
    for name in ("string", "strin"):
        with pytest.raises(TypeError) as raised:
            umls.search_many(["fever"], **{name: "y"})
        assert str(raised.value) == (
            f"Umls.search_many() got an unexpected keyword argument '{name}'"
        )


class _Endless:
    """An endless iterable of one name that counts how many it gave: past 20,000 a read is an
    AssertionError, so a lost bound fails the test instead of eating the machine's memory."""

    def __init__(self, name: str) -> None:
        self.name, self.read = name, 0

    def __iter__(self) -> _Endless:
        return self

    def __next__(self) -> str:
        self.read += 1
        assert self.read <= 20_000, "read past the bound"
        return self.name


def test_an_endless_iterable_of_sources_is_refused_not_read_forever(tmp_path: Path) -> None:
    """``sabs=`` (and every list of names) is read to a bound: an endless iterable is bad input
    once one name past it is read, naming the argument and what to give instead."""
    with Umls(meta=FIXTURES / "umls", index_dir=tmp_path / "index") as umls:
        sabs, labels = _Endless("MSH"), _Endless("RB")
        for name, call in (
            ("sabs", lambda: umls.search("fever", sabs=sabs)),
            ("relation_labels", lambda: umls.relations("C0000005", relation_labels=labels)),
            ("sabs", lambda: umls.search("fever", sabs=["MSH"] * 10_001)),
        ):
            with pytest.raises(BadInputError) as raised:
                call()
            assert (str(raised.value), raised.value.key, raised.value.hint) == (
                f"{name} holds more than 10,000 names",
                name,
                f"give {name} the names themselves, at most 10,000 (a list, a tuple or a set)",
            )
        assert (sabs.read, labels.read) == (10_001, 10_001)
        (found,) = umls.search("fever", sabs=["MSH"] * 10_000)  # (the bound itself is read)
        assert found.ui == "C9000091"
    # the index of that search is in the test's folder, never the user's cache
    assert [p.name.split(".")[0] for p in (tmp_path / "index").glob("*.sqlite")] == ["MRCONSO"]
