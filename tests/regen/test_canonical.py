from __future__ import annotations

import hashlib
from pathlib import Path

from tempmedbench_synonyms.files import sha256_file
from tempmedbench_synonyms.regen.canonical import (
    sha256_bytes,
    sha256_text,
    surface_line_bytes,
    table_bytes,
)


def test_table_bytes_are_sorted_indented_utf8_with_one_final_newline() -> None:
    table = {"b": [1, 2], "a": {"é": None, "Z": "ǅ𝟐"}}
    assert (
        table_bytes(table)
        == (
            '{\n  "a": {\n    "Z": "ǅ𝟐",\n    "é": null\n  },\n  "b": [\n    1,\n    2\n  ]\n}\n'
        ).encode()
    )


def test_surface_line_is_compact_sorted_and_keeps_line_separators_raw() -> None:
    obj = {"qid": "q1", "question_surface": 'a\u2028b\u0085c "d" é', "n": 1.5}
    assert surface_line_bytes(obj) == (
        '{"n":1.5,"qid":"q1","question_surface":"a\u2028b\u0085c \\"d\\" é"}\n'
    ).encode("utf-8")


def test_numbers_are_respelled_the_way_python_json_writes_them() -> None:
    import json

    assert surface_line_bytes(json.loads('{"x": 1.50E+2, "y": 10}')) == b'{"x":150.0,"y":10}\n'


def test_sha256_values(tmp_path: Path) -> None:
    # FIPS 180-2 test vector for "abc"
    abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert sha256_bytes(b"abc") == abc
    assert sha256_text("abc") == abc
    assert sha256_text("é") == hashlib.sha256(b"\xc3\xa9").hexdigest()
    f = tmp_path / "f"
    f.write_bytes(b"abc")
    assert sha256_file(f) == abc
