"""Test helpers for code that talks to UMLS Terminology Services, fully offline (public API).

* ``testing.fake``: ``FakeUts``, a fake UTS REST API over invented MRCONSO.RRF rows and, when
  given, MRDEF, MRREL, MRSTY, MRHIER and MRSAB rows (``FakeUtsData``, ``FakeUtsData.from_meta``
  for a folder of them, ``FakeRow``), answering ``FakeReply``s to every request of SPEC 11
  (``testing.routes``; the RRF layouts: ``testing.rrf``), misbehaving on request (``Faults``)
  and logging what it saw (``SeenRequest``).
* ``testing.server``: the fake served two ways, over one core (``FakeUts.handle``):
  ``FakeUtsServer``, a real HTTP/1.1 server with keep-alive bound to 127.0.0.1 only, in a thread::

      with FakeUtsServer(FakeUts(FakeUtsData.from_mrconso(path), api_key="CANARY")) as server:
          client = UtsClient(base_url=server.base_url, ...)

  and ``add_fake_uts(rsps, fake)``, which registers the fake with a ``responses.RequestsMock`` for
  tests that never open a socket (``responses`` is a test dependency, imported only there).
* ``testing.invented``: invented data: ``mrconso_row`` and ``invented_rows`` (MRCONSO.RRF lines),
  ``make_invented_release`` (a release folder frozen from them, an ``InventedRelease``) and
  ``write_manifest`` (rehash a release folder into its MANIFEST.sha256).
* ``testing.clock``: ``VirtualTime``, a clock and a sleep to inject, so that rate-limit and retry
  tests never wait.
* ``testing.canary``: ``CANARY_KEY`` and ``find_secret``, to grep everything a run leaves behind
  for the key.

Import every name from ``tempmedbench_synonyms.testing``; the submodules are how it is arranged.
"""

from tempmedbench_synonyms.testing.canary import CANARY_KEY, find_secret
from tempmedbench_synonyms.testing.clock import VirtualTime
from tempmedbench_synonyms.testing.fake import (
    FAULT_KINDS,
    FakeReply,
    FakeRow,
    FakeUts,
    FakeUtsData,
    Faults,
    SeenRequest,
)
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
