"""Test helpers for code that talks to UMLS Terminology Services, fully offline (public API:
README.md, "Testing your own code offline"). Import every name from
``tempmedbench_synonyms.testing``; the submodules are how it is arranged.
"""

from tempmedbench_synonyms.testing.canary import CANARY_KEY, find_secret
from tempmedbench_synonyms.testing.clock import VirtualTime
from tempmedbench_synonyms.testing.data import FakeRow, FakeUtsData
from tempmedbench_synonyms.testing.fake import FAULT_KINDS, FakeReply, FakeUts, Faults, SeenRequest
from tempmedbench_synonyms.testing.invented import (
    InventedRelease,
    invented_rows,
    make_invented_release,
    mrconso_row,
    write_manifest,
)
from tempmedbench_synonyms.testing.server import FakeUtsServer, RunningFakeUts, add_fake_uts

__all__ = [
    "CANARY_KEY",
    "FAULT_KINDS",
    "FakeReply",
    "FakeRow",
    "FakeUts",
    "FakeUtsData",
    "FakeUtsServer",
    "Faults",
    "InventedRelease",
    "RunningFakeUts",
    "SeenRequest",
    "VirtualTime",
    "add_fake_uts",
    "find_secret",
    "invented_rows",
    "make_invented_release",
    "mrconso_row",
    "write_manifest",
]
