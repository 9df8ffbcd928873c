"""The exceptions of tempmedbench-synonyms, each with its ``exit_code`` and ``outcome`` (README.md,
"Outcomes and exit codes"). Only the CLI turns them into exit codes (docs/architecture.md,
"Errors").
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: this leaf imports nothing of the package
    from tempmedbench_synonyms.regen.report import Report


class Outcome(StrEnum):
    """How a run ends (SPEC section 5): the ``outcome`` of every report and ``--json`` object."""

    VERIFIED = "verified"
    MISMATCH = "mismatch"
    BAD_INPUT = "bad_input"
    NOT_AUTHORISED = "not_authorised"
    UNAVAILABLE = "unavailable"
    #: Not in SPEC section 5's table: a bug, exit 70 (see ``InternalError``).
    INTERNAL_ERROR = "internal_error"
    #: ``--dry-run`` said what a run would do, and rebuilt nothing; exit 0 (SPEC section 7).
    PLANNED = "planned"
    #: Ctrl-C (exit 130) or SIGTERM (exit 143); what was fetched stays cached.
    INTERRUPTED = "interrupted"
    #: A ``umls`` lookup (SPEC section 11) that UMLS answered (exit 0) ...
    FOUND = "found"
    #: ... or has nothing for: an unknown identifier or an empty list (exit 1).
    NOT_FOUND = "not_found"


#: How many items a list in a message shows before "and N more" (SPEC section 8).
LIST_AT_MOST = 10


def plural(n: int, word: str, words: str | None = None) -> str:
    """``n`` and the word in the number it needs: ``1 atom``, ``2 atoms``, ``0 entries``."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def bounded_list(items: Iterable[object], *, limit: int = LIST_AT_MOST, sep: str = ", ") -> str:
    """The first ``limit`` items as text, then "and N more" (SPEC section 8)."""
    rest = iter(items)
    shown = [str(item) for item in itertools.islice(rest, limit)]
    more = sum(1 for _ in rest)
    if more:
        shown.append(f"and {more} more")
    return sep.join(shown)


class TempMedBenchError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code: int = 2
    outcome: Outcome = Outcome.BAD_INPUT

    def __init__(self, message: str = "", *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        #: what the run had done when it stopped, for its ``--json`` report (``requests`` and
        #: ``cache_hits`` of a fetch a 401 stopped); the keys are the report's
        self.report_fields: dict[str, Any] = {}


class MismatchError(TempMedBenchError):
    """The files were rebuilt, but a hash differs or a concept drifted: raised by
    ``ensure_synonyms`` only."""

    exit_code = 1
    outcome = Outcome.MISMATCH

    def __init__(self, report: Report) -> None:
        self.report = report
        super().__init__(
            f"{report.release}: the rebuilt files do not verify: {report.message} "
            "(a file that differs is written beside its final path as FILE.unverified)",
            hint=report.hint,
        )


class BadInputError(TempMedBenchError):
    """The input cannot be used as it is: a file, a line, a key, an option."""

    def __init__(
        self,
        problem: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.problem = problem
        self.path = None if path is None else str(path)
        self.line = line
        self.key = key
        where: list[str] = []
        if path is not None:
            where.append(str(path) if line is None else f"{path}, line {line}")
        elif line is not None:
            where.append(f"line {line}")
        # "--rate 25 is out of range" names its option already: no "--rate: " before it
        if key and not problem.startswith(key):
            where.append(key)
        said = ": ".join(where)
        super().__init__(f"{said}: {problem}" if said else problem, hint=hint)


class ManifestError(BadInputError):
    """A release file is missing, differs from MANIFEST.sha256, or a manifest path is unsafe."""

    def __init__(
        self,
        problem: str,
        *,
        path: str,
        expected: str | None = None,
        actual: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        files: Sequence[ManifestError] = (),
    ) -> None:
        self.expected = expected
        self.actual = actual
        #: With several bad files, one error each (this one names MANIFEST.sha256).
        self.files = list(files)
        evidence = []
        if expected is not None:
            evidence.append(f"expected sha256 {expected}")
        if actual is not None:
            evidence.append(f"actual sha256 {actual}")
        text = problem + (f" ({', '.join(evidence)})" if evidence else "")
        super().__init__(
            text,
            path=path,
            line=line,
            hint=hint
            or "download the release folder again, or restore the file; "
            "a release file is never edited in place",
        )


class SpanError(BadInputError):
    """A span of the synonym table cannot be applied to its question."""

    def __init__(
        self,
        problem: str,
        *,
        qid: str,
        concepts: Sequence[str],
        spans: Sequence[Sequence[int]],
        path: str = "synonyms/synonym_table_kept.json",
    ) -> None:
        self.qid = qid
        self.concepts = list(concepts)
        self.spans = [list(s) for s in spans]
        named = bounded_list(
            f"{c!r} {list(s)}" for c, s in zip(self.concepts, self.spans, strict=False)
        )
        super().__init__(
            f"qid {qid!r}: {problem}: {named}",
            path=path,
            hint="the table and the question surface do not belong together; "
            "check that both come from the same release",
        )


class UntrustedError(BadInputError):
    """A cache or rate-state path another user owns or others can write (SPEC 8, "Shared
    folders"): its content cannot be trusted."""


class NotAuthorisedError(TempMedBenchError):
    """UMLS refused the API key (HTTP 401 or 403), or there is no key to give it."""

    exit_code = 3
    outcome = Outcome.NOT_AUTHORISED

    def __init__(
        self,
        status: int | None = None,
        url: str | None = None,
        *,
        message: str | None = None,
        hint: str | None = None,
    ) -> None:
        #: The HTTP status and the (redacted) URL UMLS refused; None when nothing was sent.
        self.status = status
        self.url = url
        super().__init__(
            message
            or f"UMLS answered HTTP {status} for {url}: the API key is missing, invalid or expired",
            hint=hint
            or "check the key in your UTS profile (https://uts.nlm.nih.gov/uts/profile) and "
            "put it in the UMLS_API_KEY environment variable or a file named by --api-key-file",
        )


class ApiKeyMissingError(NotAuthorisedError):
    """No API key was given, and the network is needed (exit 3); see ``secret.missing_key()``."""


class UnavailableError(TempMedBenchError):
    """The atoms cannot be had now: UMLS unreachable, the release not served, or offline."""

    exit_code = 4
    outcome = Outcome.UNAVAILABLE


class Cancelled(TempMedBenchError):
    """Control flow: the run was stopping before this request was sent; the error that stopped
    the run wins."""

    exit_code = 4
    outcome = Outcome.UNAVAILABLE

    def __init__(self) -> None:
        super().__init__("the run was stopped before this request was sent")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM reached the command (``runtime.interrupts``): a ``KeyboardInterrupt``
    so every cleanup runs; exit 130 for SIGINT, 143 for SIGTERM."""

    outcome = Outcome.INTERRUPTED

    def __init__(self, signum: int = 2, name: str = "Ctrl-C") -> None:
        super().__init__(name)
        self.signum = signum
        self.name = name
        #: what the run had done when it stopped (``TempMedBenchError.report_fields``)
        self.report_fields: dict[str, Any] = {}

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class InternalError(TempMedBenchError):
    """An exception the code did not expect: a bug. The CLI shows its traceback and exits 70."""

    exit_code = 70
    outcome = Outcome.INTERNAL_ERROR


#: Every outcome's exit code: the two a finished run has, then each error class's own.
EXIT_CODES: dict[Outcome, int] = {
    Outcome.VERIFIED: 0,
    Outcome.MISMATCH: 1,
    **{
        cls.outcome: cls.exit_code
        for cls in (BadInputError, NotAuthorisedError, UnavailableError, InternalError)
    },
    Outcome.PLANNED: 0,
    Outcome.INTERRUPTED: 130,
    Outcome.FOUND: 0,
    Outcome.NOT_FOUND: 1,
}
