"""The UMLS identifiers a request names, checked here before anything is sent or cached.

One check for each kind of identifier (SPEC sections 2 and 3), each raising ``BadInputError`` that
names the value and the form expected:

- a release: ``YYYYAA`` or ``YYYYAB`` (UMLS has two releases a year, such as 2025AB), or
  ``current``;
- a CUI: ``C`` and 7 digits (C0020538); an AUI: ``A`` and 7 to 9 digits (A3220484: UMLS AUIs
  have 7 or 8 digits today, 9 leaves room to grow);
- a SAB, a root source abbreviation: upper-case letters, digits, ``_``, ``.`` and ``-``
  (SNOMEDCT_US, HL7V3.0, ICF-CY); a near miss of a source UMLS has (``SNOMEDCT``,
  ``snomedct_us``) is refused with a "did you mean" hint, an unfamiliar SAB of the right shape
  is sent as it is (UMLS adds sources);
- a source code: any text UTS can take in one path segment: not empty, no control character, not
  only dots (which HTTP clients remove from a path, RFC 3986 section 5.2.4), valid Unicode, at
  most ``MAX_CODE_LENGTH`` characters.

The release table loader (``release``) checks a CUI's shape with ``CUI_PATTERN`` from here.
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections.abc import Iterable

from tempmedbench_synonyms.errors import BadInputError

RELEASE_PATTERN = r"[0-9]{4}A[AB]"
CUI_PATTERN = r"C[0-9]{7}"
AUI_PATTERN = r"A[0-9]{7,9}"
SAB_PATTERN = r"[A-Z0-9][A-Z0-9_.-]{0,39}"
#: SNOMED CT identifiers have at most 18 digits, LOINC codes 8 characters; 100 leaves room for
#: any source's code while keeping a message and a cache key short.
MAX_CODE_LENGTH = 100

_RELEASE = re.compile(RELEASE_PATTERN)
_CUI = re.compile(CUI_PATTERN)
_AUI = re.compile(AUI_PATTERN)
_SAB = re.compile(SAB_PATTERN)

#: Root source abbreviations of the UMLS Metathesaurus (the public list of source vocabularies,
#: https://www.nlm.nih.gov/research/umls/sourcereleasedocs/index.html): what a near miss is
#: measured against. A SAB not listed here is still sent if it is not close to one that is.
KNOWN_SABS = frozenset(
    """
    AIR ALT AOD AOT ATC BI CCC CCPSS CCS CCSR_ICD10CM CCSR_ICD10PCS CDCREC CDT CHV COSTAR CPM
    CPT CPTSP CSP CST CVX DDB DMDICD10 DMDUMD DRUGBANK DSM-5 DXP FMA GO GS HCDT HCPCS HCPT HGNC
    HL7V2.5 HL7V3.0 HLREL HPO ICD10 ICD10AE ICD10AM ICD10AMAE ICD10CM ICD10DUT ICD10PCS ICD9CM
    ICF ICF-CY ICNP ICPC ICPC2EDUT ICPC2EENG ICPC2ICD10DUT ICPC2ICD10ENG ICPC2P ICPCBAQ ICPCDAN
    ICPCDUT ICPCFIN ICPCFRE ICPCGER ICPCHEB ICPCHUN ICPCITA ICPCNOR ICPCPAE ICPCPOR ICPCSPA
    ICPCSWE JABL KCD5 LCH LCH_NW LNC LNC-DE-AT LNC-DE-DE LNC-EL-GR LNC-ES-AR LNC-ES-ES LNC-ES-MX
    LNC-ET-EE LNC-FR-BE LNC-FR-CA LNC-FR-FR LNC-IT-IT LNC-KO-KR LNC-NL-NL LNC-PL-PL LNC-PT-BR
    LNC-RU-RU LNC-TR-TR LNC-UK-UA LNC-ZH-CN MCM MDR MDRARA MDRBPO MDRCZE MDRDUT MDRFRE MDRGER
    MDRGRE MDRHUN MDRITA MDRJPN MDRKOR MDRLAV MDRPOL MDRPOR MDRRUS MDRSPA MDRSWE MED-RT MEDCIN
    MEDLINEPLUS MEDLINEPLUS_SPA MMSL MMX MSH MSHCZE MSHDUT MSHFIN MSHFRE MSHGER MSHITA MSHJPN
    MSHLAV MSHNOR MSHPOL MSHPOR MSHRUS MSHSCR MSHSPA MSHSWE MTH MTHCMSFRF MTHICD9 MTHICPC2EAE
    MTHICPC2ICD10AE MTHMST MTHMSTFRE MTHMSTITA MTHSPL MVX NANDA-I NCBI NCI NCISEER NDDF NEU NIC
    NOC NUCCHCPT OMIM OMS ORPHANET PCDS PDQ PNDS PPAC PSY QMR RAM RCD RCDAE RCDSA RCDSY RXNORM
    SCTSPA SNM SNMI SNOMEDCT_US SNOMEDCT_VET SOP SPN SRC TKMT ULT UMD USP USPMG UWDA VANDF WHO
    WHOFRE WHOGER WHOPOR WHOSPA
    """.split()
)
#: Names people type for a source that UMLS abbreviates otherwise (too far apart for difflib).
_ALIASES = {"LOINC": "LNC", "MESH": "MSH", "SNOMED": "SNOMEDCT_US", "SNOMEDCT": "SNOMEDCT_US"}
#: How alike (difflib's ratio) a SAB must be to a known one to count as a near miss of it.
_NEAR = 0.8

_TABLE_HINT = 'in a release, it is the concept\'s "{field}" in synonyms/synonym_table_kept.json'


def is_release(umls_release: str) -> bool:
    """Whether ``umls_release`` names a UMLS release (``current`` included)."""
    return umls_release == "current" or _RELEASE.fullmatch(umls_release) is not None


def check_release(umls_release: str) -> str:
    """``umls_release`` if it names a UMLS release (``2025AB``, ``current``), else BadInputError."""
    if is_release(umls_release):
        return umls_release
    raise BadInputError(
        f"{umls_release!r} is not a UMLS release name: expected YYYYAA or YYYYAB (the year and the "
        "release of that year, such as 2025AB), or current",
        hint="the release comes from --umls-release, or else from umls_release in "
        "synonyms/synonym_table_kept.json",
    )


def check_cui(cui: str) -> str:
    """``cui`` if it is a CUI (``C`` and 7 digits), else BadInputError."""
    if _CUI.fullmatch(cui):
        return cui
    raise BadInputError(
        f"CUI {cui!r} is not a UMLS concept identifier: expected C and 7 digits, such as C0020538",
        hint="check the CUI: " + _TABLE_HINT.format(field="cui"),
    )


def check_aui(aui: str) -> str:
    """``aui`` if it is an AUI (``A`` and 7 to 9 digits), else BadInputError."""
    if _AUI.fullmatch(aui):
        return aui
    raise BadInputError(
        f"AUI {aui!r} is not a UMLS atom identifier: expected A and 7 to 9 digits, such as "
        "A3220484",
        hint="check the AUI: " + _TABLE_HINT.format(field="aui"),
    )


def check_sab(sab: str, *, also: Iterable[str] = ()) -> str:
    """``sab`` if it looks like a root source abbreviation, else BadInputError.

    A SAB of the wrong shape is refused, with the known SAB (or one of ``also``, the table's
    own SABs) it is a near miss of, if any; a SAB of the right shape is refused only if it is
    not a known one but close to one (``SNOMEDCT`` for ``SNOMEDCT_US``).
    """
    if sab in KNOWN_SABS:
        return sab
    if _SAB.fullmatch(sab):
        guess = _near_known(sab)
        if guess is None:
            return sab  # an unfamiliar source of the right shape: UMLS adds sources
        problem = f"SAB {sab!r} is not a UMLS source abbreviation, only close to {guess}"
    else:
        guess = _near(sab, KNOWN_SABS | {s for s in also if _SAB.fullmatch(s)})
        problem = (
            f"SAB {sab!r} is not a UMLS source abbreviation: expected upper-case letters, "
            "digits, '_', '.' and '-', such as SNOMEDCT_US"
        )
    fix = f"did you mean {guess}? " if guess else ""
    raise BadInputError(problem, hint=fix + "check the SAB: " + _TABLE_HINT.format(field="sab"))


@functools.lru_cache(maxsize=256)  # a table repeats its SABs thousands of times
def _near_known(sab: str) -> str | None:
    return _near(sab, KNOWN_SABS)


def _near(sab: str, candidates: frozenset[str] | set[str]) -> str | None:
    """The SAB among ``candidates`` that ``sab`` is most likely a misspelling of."""
    upper = sab.strip().upper()
    if upper in candidates:
        return upper
    if upper in _ALIASES:
        return _ALIASES[upper]
    close = difflib.get_close_matches(upper, sorted(candidates), n=1, cutoff=_NEAR)
    return close[0] if close else None


def check_code(code: str, *, field: str = "code") -> str:
    """``code`` if UTS can take it in one URL path segment, else BadInputError."""
    problem = None
    if not code:
        problem = "it is empty"
    elif set(code) == {"."}:
        problem = (
            "it is made only of dots, which HTTP clients remove from a URL path (RFC 3986, "
            "section 5.2.4), so another resource would be asked for"
        )
    elif len(code) > MAX_CODE_LENGTH:
        problem = f"it is {len(code)} characters long, more than the {MAX_CODE_LENGTH} allowed"
    else:
        bad = next((c for c in code if unicodedata.category(c) in ("Cc", "Cs")), None)
        if bad is not None:
            kind = "a lone surrogate" if unicodedata.category(bad) == "Cs" else "the control"
            problem = f"it contains {kind} character U+{ord(bad):04X}"
    if problem is None:
        return code
    shown = code if len(code) <= 40 else code[:40] + "..."
    raise BadInputError(
        f"{field} {shown!r} cannot be sent to UMLS: {problem}",
        hint=f"check the {field}: " + _TABLE_HINT.format(field=field),
    )
