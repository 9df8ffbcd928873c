"""Tolerant models of UTS payloads: string flags, "NONE" links, CUI and code inside link URLs."""

from __future__ import annotations

from typing import Any

import pytest

from tempmedbench_synonyms.atoms import Atom
from tempmedbench_synonyms.uts.models import (
    UtsAtom,
    UtsConcept,
    UtsPage,
    last_segment,
    release_of,
)

BASE = "https://uts.invalid/rest/content/2099AA"


def atom_json(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "classType": "Atom",
        "ui": "A90000001",
        "suppressible": "false",
        "obsolete": "false",
        "rootSource": "SNOMEDCT_US",
        "termType": "PT",
        "code": f"{BASE}/source/SNOMEDCT_US/1000001",
        "concept": f"{BASE}/CUI/C9000001",
        "sourceConcept": "NONE",
        "sourceDescriptor": None,
        "attributes": f"{BASE}/AUI/A90000001/attributes",
        "parents": "NONE",
        "ancestors": None,
        "name": "Invented fever of tests",
        "language": "ENG",
        "contentViewMemberships": [{"name": "An invented view", "uri": "NONE"}],
    }
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not ...}


def test_an_atom_maps_as_spec_section_3_says() -> None:
    atom = UtsAtom.model_validate(atom_json())
    assert atom.to_atom() == Atom(
        aui="A90000001",
        name="Invented fever of tests",
        tty="PT",
        sab="SNOMEDCT_US",
        language="ENG",
        cui="C9000001",
        usable=True,
    )
    assert atom.code_id == "1000001"
    assert atom.source_concept is None  # "NONE"
    assert atom.source_descriptor is None  # null


@pytest.mark.parametrize(
    ("obsolete", "suppressible", "usable"),
    [
        ("false", "false", True),
        (False, False, True),
        ("false", False, True),
        ("true", "false", False),
        ("false", "true", False),
        (True, False, False),
        (None, "false", False),  # null counts as not usable
        (..., "false", False),  # missing counts as not usable
        ("false", ..., False),
        ("False", "false", False),  # only the exact string "false" is false
        ("NONE", "false", False),
        (0, "false", False),
    ],
)
def test_usable_only_when_both_flags_are_the_string_or_boolean_false(
    obsolete: object, suppressible: object, usable: bool
) -> None:
    atom = UtsAtom.model_validate(atom_json(obsolete=obsolete, suppressible=suppressible))
    assert atom.usable is usable
    assert atom.to_atom().usable is usable


@pytest.mark.parametrize("concept", ["NONE", None, "", ...])
def test_an_atom_without_a_concept_link_has_an_empty_cui(concept: object) -> None:
    assert UtsAtom.model_validate(atom_json(concept=concept)).cui == ""


def test_code_and_cui_are_decoded_last_segments() -> None:
    atom = UtsAtom.model_validate(
        atom_json(code=f"{BASE}/source/LNC/1234-5%2F6", concept=f"{BASE}/CUI/C9000002/")
    )
    assert atom.code_id == "1234-5/6"
    assert atom.cui == "C9000002"


def test_a_missing_language_maps_to_an_empty_string() -> None:
    assert UtsAtom.model_validate(atom_json(language=...)).to_atom().language == ""


def test_unknown_fields_are_ignored_and_required_ones_are_required() -> None:
    atom = UtsAtom.model_validate(atom_json(brandNewField={"x": 1}))
    assert atom.ui == "A90000001"
    with pytest.raises(ValueError, match="termType"):
        UtsAtom.model_validate(atom_json(termType=...))


def test_a_dumped_atom_reads_back_equal() -> None:
    atom = UtsAtom.model_validate(atom_json())
    again = UtsAtom.model_validate(atom.model_dump(mode="json", by_alias=True))
    assert again == atom
    assert again.to_atom() == atom.to_atom()


def test_a_concept_reads_its_fields_and_ignores_unknown_ones() -> None:
    """Its fields read, ``"NONE"`` absent, an unknown key ignored (its release, read from its
    links, is tests/uts/test_cached.py's test_current_is_the_release_a_concept_s_links_name)."""
    concept = UtsConcept.model_validate(
        {
            "classType": "Concept",
            "ui": "C9000001",
            "name": "Invented fever of tests",
            "suppressible": False,
            "status": "R",
            "semanticTypes": [{"name": "Invented Type", "uri": "https://uts.invalid/x"}],
            "atomCount": 3,
            "atoms": f"{BASE}/CUI/C9000001/atoms",
            "definitions": "NONE",
            "relations": "NONE",
            "defaultPreferredAtom": f"{BASE}/CUI/C9000001/atoms/preferred",
            "somethingNew": [1, 2],
        }
    )
    assert concept.atom_count == 3
    assert concept.definitions is None
    assert [t.name for t in concept.semantic_types] == ["Invented Type"]


def test_an_old_concept_with_bare_semantic_types_and_no_links() -> None:
    concept = UtsConcept.model_validate(
        {"ui": "C9000001", "semanticTypes": ["T999"], "atoms": "NONE"}
    )
    assert [t.name for t in concept.semantic_types] == ["T999"]
    assert concept.atoms is None


@pytest.mark.parametrize(
    ("link", "base_url", "expected"),
    [
        # A base URL whose own path holds a "content" segment (a mirror, a proxy).
        ("https://m.invalid/content/uts/rest/content/2025AB/CUI/C9000001",
         "https://m.invalid/content/uts/rest", "2025AB"),
        ("https://m.invalid/content/uts/rest/content/2025AB/CUI/C9000001", None, "2025AB"),
        ("https://m.invalid/content/uts/rest/content/2025AB/CUI/C9000001/atoms/preferred", None,
         "2025AB"),
        # A source code named "content": the last "content" is not the version's either.
        ("https://uts.invalid/rest/content/2025AB/source/XYZ/content/atoms", None, "2025AB"),
        ("https://uts.invalid/rest/content/2025AB/source/XYZ/content/atoms",
         "https://uts.invalid/rest/", "2025AB"),
        ("https://uts.invalid/rest/content/2025AB/AUI/A9", "https://uts.invalid/rest", "2025AB"),
        # Links elsewhere than the base URL are read by their structure.
        ("https://uts-ws.invalid/rest/content/2099AA/CUI/C9", "https://m.invalid/rest", "2099AA"),
        ("https://uts.invalid/rest/content/2025AB", None, None),
        ("https://uts.invalid/rest/content/2025AB/TUI/T999", None, None),
    ],
)  # fmt: skip
def test_release_of_is_not_fooled_by_a_content_segment_elsewhere(
    link: str, base_url: str | None, expected: str | None
) -> None:
    assert release_of(link, base_url) == expected


def test_link_helpers() -> None:
    assert release_of("https://uts.invalid/rest/content/2025AB/CUI/C9000001") == "2025AB"
    assert release_of("https://uts.invalid/rest/semantic-network/2025AB/TUI/T999") is None
    assert release_of(None) is None
    assert last_segment("https://uts.invalid/a/b%20c") == "b c"
    assert last_segment(None) == ""
    assert last_segment("https://uts.invalid") == ""
    assert last_segment("https://uts.invalid/") == ""
    assert last_segment("https://uts.invalid/rest/CUI/C9000001?x=1#y") == "C9000001"
    assert last_segment("/content/2099AA/CUI/C9000001") == "C9000001"
    assert last_segment("C9000001") == "C9000001"


def test_page_envelope_defaults() -> None:
    page = UtsPage.model_validate({"result": [], "pageSize": 200})
    assert (page.page_size, page.page_number, page.page_count) == (200, None, None)


# -- SPEC section 11: the models of the lookups' answers -------------------------------------------


def test_a_record_keeps_the_object_uts_sent_read_only_with_none_as_null() -> None:
    from tempmedbench_synonyms.uts.models import SourceAtomCluster

    sent = {"classType": "SourceAtomCluster", "ui": "1000001", "rootSource": "INV",
            "definitions": "NONE", "atomCount": True, "brandNew": {"x": "NONE"}}  # fmt: skip
    model = SourceAtomCluster.read(sent)
    assert (model.ui, model.root_source, model.definitions, model.atom_count) == (
        "1000001", "INV", None, None,  # a boolean is no count
    )  # fmt: skip
    assert dict(model.raw) == {**sent, "definitions": None, "brandNew": {"x": None}}
    with pytest.raises(TypeError):
        model.raw["ui"] = "changed"  # type: ignore[index]
    assert sent["definitions"] == "NONE"  # the caller's object is left as it was


def test_text_fields_take_numbers_as_their_digits_and_none_as_absent() -> None:
    from tempmedbench_synonyms.uts.models import SearchResult

    result = SearchResult.read({"ui": 9468002, "name": "NONE", "rootSource": ["x"]})
    assert (result.ui, result.name, result.root_source, result.uri) == ("9468002", None, None, None)


def test_relations_of_every_shape_name_both_ends_by_the_last_segment() -> None:
    from tempmedbench_synonyms.uts.models import Relation

    new = Relation.read({"relatedFromId": f"{BASE}/source/INV/10%2F1", "relationLabel": "PAR",
                         "relatedId": "C9000002", "relatedIdName": "Invented"})  # fmt: skip
    assert (new.related_from_ui, new.related_ui, new.related_id_name) == (
        "10/1", "C9000002", "Invented",
    )  # fmt: skip
    old_atom = Relation.read({"relatedConcept": "", "relatedAtom": f"{BASE}/AUI/A90000002"})
    assert (old_atom.related_ui, old_atom.related_from_ui) == ("A90000002", None)
    named = Relation.read({"relatedConcept": f"{BASE}/source/LNC/LA0-0",
                           "relatedConceptName": "Invented answer"})  # fmt: skip
    assert (named.related_ui, named.related_id_name) == ("LA0-0", "Invented answer")
    assert Relation.read({}).related_ui is None


def test_a_hierarchy_entry_of_2015_is_the_relation_to_its_code() -> None:
    from tempmedbench_synonyms.uts.models import HierarchyEntry

    entry = HierarchyEntry.read({
        "classType": "AtomClusterAtomClusterRelation", "ui": "0123abcd", "rootSource": "INV",
        "relationLabel": "PAR", "relatedConcept": f"{BASE}/source/INV/1000000",
    })  # fmt: skip
    assert (entry.ui, entry.aui, entry.name, entry.root_source) == (
        "1000000", None, None, "INV",
    )  # fmt: skip
    assert entry.raw["ui"] == "0123abcd"


def test_a_root_source_language_is_an_object_or_its_code() -> None:
    from tempmedbench_synonyms.uts.models import RootSource

    assert RootSource.read({"language": {"abbreviation": "FRE"}}).language == "FRE"
    assert RootSource.read({"language": "SPA", "restrictionLevel": "9"}).language == "SPA"
    assert RootSource.read({"restrictionLevel": "9"}).restriction_level is None


@pytest.mark.parametrize(
    ("value", "base", "release"),
    [
        ({"uri": f"{BASE}/CUI/C9000001"}, None, "2099AA"),
        ([{"name": "x"}, {"concepts": "https://uts.invalid/rest/search/2098AB?string=1"}],
         "https://uts.invalid/rest", "2098AB"),
        ({"uri": "https://uts.invalid/rest/semantic-network/2097AA/TUI/T047"},
         "https://uts.invalid/rest", "2097AA"),
        # behind a base URL that holds a content segment of its own
        ({"atoms": "https://m.invalid/content/uts/rest/content/2096AA/CUI/C1/atoms"},
         "https://m.invalid/content/uts/rest", "2096AA"),
        ({"url": "http://example.invalid/", "name": "NONE"}, "https://uts.invalid/rest", None),
        ({"relatedId": "C9000001"}, None, None),
    ],
)  # fmt: skip
def test_the_release_of_any_answer_is_read_from_its_first_link(
    value: Any, base: str | None, release: str | None
) -> None:
    from tempmedbench_synonyms.uts.models import release_in

    assert release_in(value, base) == release


def test_link_ids_are_the_last_segment_decoded_and_a_bare_id_is_kept() -> None:
    from tempmedbench_synonyms.uts.models import (
        HierarchyEntry,
        Relation,
        SemanticTypeInfo,
        link_id,
    )

    hl7 = f"{BASE}/source/HL7V3.0/AMB%2F9%20%25x"
    assert (link_id(hl7), link_id("AMB/9 %x"), link_id("NONE"), link_id(None)) == (
        "AMB/9 %x", "AMB/9 %x", None, None,
    )  # fmt: skip
    rel = Relation.read({"relatedFromId": f"{BASE}/CUI/C9000001", "relatedId": hl7})
    assert (rel.related_from_id, rel.related_id) == ("C9000001", "AMB/9 %x")
    assert (rel.related_from_ui, rel.related_ui) == ("C9000001", "AMB/9 %x")
    assert rel.raw["relatedId"] == hl7  # UTS's own object is kept as sent
    old = Relation.read({"relatedConcept": f"{BASE}/CUI/C9000002"})
    assert (old.related_id, old.related_from_id) == ("C9000002", None)

    atom = HierarchyEntry.read({
        "classType": "Atom", "ui": "A94462368", "name": "Invented HL7 parent",
        "rootSource": "HL7V3.0", "code": hl7, "concept": f"{BASE}/CUI/C9000003",
    })  # fmt: skip
    assert (atom.ui, atom.aui, atom.class_type) == ("AMB/9 %x", "A94462368", "Atom")
    cluster = HierarchyEntry.read({"classType": "SourceAtomCluster", "ui": "AMB/9 %x"})
    assert (cluster.ui, cluster.aui) == ("AMB/9 %x", None)

    tui = SemanticTypeInfo.read({"name": "Invented", "uri": f"{BASE}/semantic-network/X/TUI/T901"})
    assert (tui.ui, tui.tui) == ("T901", "T901")
    assert SemanticTypeInfo.read({"name": "Invented"}).ui is None
