"""``python -m tempmedbench_synonyms``: the same as the ``tempmedbench-synonyms`` command."""

from __future__ import annotations

from tempmedbench_synonyms.cli import script_main

if __name__ == "__main__":
    script_main()
