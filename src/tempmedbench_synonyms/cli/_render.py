"""Human reports on stderr: what was checked, what matched, what drifted, what to do next; and
the plan of ``regenerate --dry-run``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tempmedbench_synonyms.errors import bounded_list, plural

if TYPE_CHECKING:  # the pipeline is imported by the commands that run it
    from tempmedbench_synonyms.plan import Plan
    from tempmedbench_synonyms.regen.report import Report

_LIST_AT_MOST = 20


def _keys(keys: list[str], reasons: dict[str, str] | None = None) -> list[str]:
    lines = []
    for key in keys[:_LIST_AT_MOST]:
        reason = (reasons or {}).get(key)
        lines.append(f"    {key}" + (f": {reason}" if reason else ""))
    if len(keys) > _LIST_AT_MOST:
        lines.append(f"    ... and {len(keys) - _LIST_AT_MOST} more (--json lists them all)")
    return lines


def _header(report: Report) -> list[str]:
    lines = [f"{report.command}: {report.release}"]
    lines.append(f"  manifest       {report.manifest_files} files match MANIFEST.sha256")
    if report.source is not None:
        via = (
            "local MRCONSO.RRF"
            if report.source == "mrconso"
            else f"UMLS REST API, {plural(report.requests, 'request')}, "
            f"{plural(report.cache_hits, 'cache hit')}"
        )
        lines.append(f"  UMLS release   {report.umls_release} ({via})")
    if report.mrconso is not None:
        read = report.mrconso["path"]
        if report.mrconso["members"]:
            read += " > " + bounded_list(report.mrconso["members"], limit=2)
        if report.mrconso["parts"]:
            read += f" ({len(report.mrconso['parts'])} parts: "
            read += bounded_list(report.mrconso["parts"]) + ")"
        lines.append(f"  MRCONSO        {read} ({report.mrconso['kind']})")
    routes = ", ".join(f"{n} {r}" for r, n in report.routes.items())
    lines.append(f"  concepts       {report.concepts}" + (f" (routes: {routes})" if routes else ""))
    spans = f", {plural(report.spans, 'span')}" if report.source is not None else ""
    lines.append(f"  questions      {report.questions}{spans}")
    for w in report.warnings:
        lines.append(f"  warning        {w}")
    return lines


def render_report(report: Report, *, verbose: bool = False) -> str:
    lines = _header(report)
    for rel, f in report.files.items():
        state = "verified" if f.match else ("missing" if f.actual is None else "MISMATCH")
        lines.append(f"  {state:<9}      {rel}")
        if verbose or not f.match:
            lines.append(f"                   expected {f.expected}")
            lines.append(f"                   actual   {f.actual or '(no file)'}")
        if f.written:
            done = "unchanged" if f.unchanged else "written "
            lines.append(f"                   {done} {f.written}")
    if report.drifted:
        lines.append(f"  drifted        {plural(len(report.drifted), 'concept')} kept no synonym:")
        lines += _keys(report.drifted, report.drift_reasons)
    if report.changed:
        lines.append(
            f"  changed        {plural(len(report.changed), 'concept')} kept another synonym:"
        )
        lines += _keys(report.changed)
    lines.append(f"{report.outcome} (exit {report.exit_code}): {report.message}")
    if report.hint:
        lines.append(f"hint: {report.hint}")
    return "\n".join(lines)


def render_freeze(report: Report) -> str:
    lines = _header(report)
    if report.drifted:
        lines.append(f"  drifted        {plural(len(report.drifted), 'concept')} kept no synonym:")
        lines += _keys(report.drifted, report.drift_reasons)
    for rel, f in report.files.items():
        lines.append(f"  frozen         {rel} {f.expected}")
    if report.replaced is not None:
        lines += _replaced(report.replaced)
    lines.append(f"{'frozen' if report.exit_code == 0 else report.outcome} "
                 f"(exit {report.exit_code}): {report.message}")  # fmt: skip
    if report.hint:
        lines.append(f"hint: {report.hint}")
    return "\n".join(lines)


def render_plan(report: Report, plan: Plan) -> str:
    """The human plan: what was checked, where the atoms would come from, what is left."""
    from tempmedbench_synonyms.uts.estimate import duration_words

    lines = [f"regenerate --dry-run: {report.release}"]
    lines.append(f"  manifest       {report.manifest_files} files match MANIFEST.sha256")
    if report.mrconso is not None:
        lines.append(f"  MRCONSO        {report.mrconso['path']} ({report.mrconso['kind']})")
        lines.append(f"  concepts       {plan.concepts}, read from the file in one pass")
    else:
        lines.append(
            f"  UMLS release   {report.umls_release} (UMLS REST API, "
            f"{plural(report.requests, 'request')} sent, {report.cache_hits} answered by the cache)"
        )
        lines.append(
            f"  requests       {plan.requests} left to send, about "
            f"{duration_words(plan.seconds or 0.0)}"
        )
        lines.append(
            f"  concepts       {plan.concepts}: {plan.cached} cached, {plan.to_fetch} to fetch"
        )
    for w in report.warnings:
        lines.append(f"  warning        {w}")
    lines.append(f"{report.outcome} (exit {report.exit_code}): {report.message}")
    return "\n".join(lines)


def _replaced(replaced: dict[str, Any]) -> list[str]:
    """What freeze --force changed in the hashes it replaced."""
    lines = [f"  replaced       the previous hashes, kept as {replaced['backup']}"]
    if not replaced["readable"]:
        lines.append("                 (the previous file could not be read as expected hashes)")
    unchanged = len(lines)
    for rel, change in replaced["files"].items():
        lines.append(f"  changed        {rel}: {change['old']} -> {change['new']}")
    for key, what in (
        ("concepts_changed", "kept another synonym"),
        ("concepts_added", "were not in the previous hashes"),
        ("concepts_removed", "are no longer in the table"),
    ):
        if replaced[key]:
            lines.append(f"  concepts       {len(replaced[key])} {what}:")
            lines += _keys(replaced[key])
    if len(lines) == unchanged:  # no hash, no concept listed as changed
        lines.append("  unchanged      every hash is the same as before")
    return lines
