"""mrconso.rows: one MRCONSO.RRF row split and checked."""

from __future__ import annotations

import pytest

from helpers.mrconso import row
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso.rows import split_row


def test_split_row() -> None:
    line = row("C0000001", "A1", "MTH", "PT", "X", "a|b".replace("|", "/"))
    assert split_row(line + "\r\n", path="M", line_no=3) == [
        "C0000001", "ENG", "P", "L1", "PF", "S1", "Y", "A1", "", "X", "", "MTH", "PT", "X",
        "a/b", "0", "N", "256",
    ]  # fmt: skip
    with pytest.raises(BadInputError) as info:
        split_row("C1|ENG|x", path="M", line_no=3)
    assert str(info.value) == (
        "M, line 3: an MRCONSO.RRF row has 18 fields, each followed by '|'; this line has 3 "
        "and no trailing |"
    )
    with pytest.raises(BadInputError, match=r"this line has 17$"):
        split_row("|" * 17, path="M", line_no=1)
