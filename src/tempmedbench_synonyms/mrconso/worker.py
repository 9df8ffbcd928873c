"""A worker process of the parallel MRCONSO scan, started by ``runtime.WorkerGroup`` (runtime
rule 3): it scans the byte ranges it is sent, one at a time, and imports only the scan and the
kernel, so it starts in a few milliseconds.
"""

from __future__ import annotations

from tempmedbench_synonyms import runtime
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.mrconso import scan

#: Progress messages from a worker: at most one per this many bytes scanned.
REPORT_EVERY = 8 << 20


def main(fd: int) -> None:
    channel = runtime.worker_setup(fd)
    try:
        path, needs, first, limits = channel.recv()
        scan.BLOCK_SIZE, scan.MAX_LINE = limits  # as the parent scans (its tests set them)
        while (task := channel.recv()) is not None:
            start, end = task
            last = start

            def report(done: int, total: int) -> None:
                nonlocal last
                if done - last >= REPORT_EVERY:
                    channel.send(("progress", done - last))
                    last = done

            result = scan.scan_range(path, start, end, needs, report, first)
            channel.send(("progress", max(0, end - last)))
            channel.send(("result", result))
    except BadInputError as err:
        channel.send(("error", (err.problem, err.path, err.line, err.hint)))
    except OSError as err:
        channel.send(("error", (f"cannot read: {err.strerror or err}", None, None, None)))
    except runtime.WorkerLost:
        pass  # the parent is gone: nothing left to do
    finally:
        channel.close()
