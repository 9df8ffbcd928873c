"""A regeneration's options, defined once: one ``RegenOptions``, built once (by the CLI, or from
the API's ``RunKeywords``) and handed down (docs/architecture.md, "Options are built once"), and
the one choice of the atom source they ask for (``RegenOptions.source``).
"""

from __future__ import annotations

import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tempmedbench_synonyms.atoms import AtomSource, check_release
from tempmedbench_synonyms.uts.options import StrPath, UtsKeywords, UtsOptions, _typed


class RunKeywords(UtsKeywords, total=False):
    """The keywords of ``regenerate`` and ``ensure_synonyms`` (``Unpack[RunKeywords]``)."""

    mrconso: StrPath | None
    out: StrPath | None
    umls_release: str | None
    progress: bool | TextIO


@dataclass(frozen=True, slots=True)
class RegenOptions:
    """One regeneration's options; ``progress`` ``None``: nowhere."""

    release: Path
    mrconso: Path | None = None
    out: Path | None = None
    umls_release: str | None = None
    uts: UtsOptions = field(default_factory=UtsOptions)
    progress: TextIO | None = None

    @classmethod
    def of(cls, release: Any, **keywords: Any) -> RegenOptions:
        """The options of the API's arguments; ``TypeError`` naming one of the wrong type."""
        path = as_path("release", release)
        kinds = typing.get_type_hints(cls)
        own = {
            name: _typed(name, kinds[name], keywords.pop(name))
            for name in ("mrconso", "out", "umls_release")
            if name in keywords
        }
        progress = keywords.pop("progress", False)
        return cls(path, **own, uts=UtsOptions.of(**keywords), progress=stream_of(progress))

    def check(self) -> None:
        """BadInputError naming an option out of range, before anything is read or written: the
        network options and the release's form when the atoms come from UTS."""
        if self.mrconso is None:
            self.uts.check()
            if self.umls_release is not None:
                check_release(self.umls_release)

    def source(self) -> AtomSource:
        """The atom source they ask for: a local MRCONSO.RRF (the network options, meaning
        nothing to it, said to be ignored), else the UTS REST API."""
        if self.mrconso is not None:
            from tempmedbench_synonyms.mrconso.source import MrconsoSource
            from tempmedbench_synonyms.progress import StepProgress

            self.uts.say_ignored("--mrconso")
            # bytes read of the file as it is stored (compressed bytes when it is packed)
            label = f"scanning {self.mrconso.name}"
            progress = StepProgress(self.progress, label=label, unit="bytes")
            return MrconsoSource(self.mrconso, progress=progress)
        # A local run never loads the HTTP stack (requests, urllib3, tenacity), so it runs where
        # that is missing, and starts sooner.
        from tempmedbench_synonyms.uts.session import rest_source

        return rest_source(self.uts, progress=self.progress)


def as_path(name: str, value: Any, *, optional: bool = False) -> Any:
    """``value`` as a ``Path``; ``TypeError`` naming the argument ``name`` if it is no path."""
    return _typed(name, Path | None if optional else Path, value)


def stream_of(progress: Any) -> TextIO | None:
    """``True``: stderr; ``False``: nowhere; else a text stream (anything with ``write``)."""
    if type(progress) is bool:
        return sys.stderr if progress else None
    if callable(getattr(progress, "write", None)):
        return progress  # type: ignore[no-any-return]
    raise TypeError(f"progress must be True, False or a text stream, not {type(progress).__name__}")
