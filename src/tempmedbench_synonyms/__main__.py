"""``python -m tempmedbench_synonyms`` (the same as ``tempmedbench-synonyms``) and the two console
scripts: each holds Ctrl-C and SIGTERM for its command (``runtime.hold_interrupts``) before it
imports the CLI, which takes a few tenths of a second."""

from __future__ import annotations

from tempmedbench_synonyms import runtime


def script_main() -> None:
    runtime.hold_interrupts()
    from tempmedbench_synonyms.cli import script_main

    script_main()


def script_regenerate_main() -> None:
    runtime.hold_interrupts()
    from tempmedbench_synonyms.cli import script_regenerate_main

    script_regenerate_main()


if __name__ == "__main__":
    script_main()
