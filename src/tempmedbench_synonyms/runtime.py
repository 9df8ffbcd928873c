"""The process-wide rules, in one place: helper threads, Ctrl-C and SIGTERM, worker processes, the
exit, the process knobs (docs/architecture.md, "The runtime contract"; held by
tests/test_runtime.py).
"""

from __future__ import annotations

import errno
import functools
import gc
import os
import queue
import signal
import struct
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tempmedbench_synonyms.errors import Interrupted

# What only the REST workers and the MRCONSO worker processes need (concurrent.futures, pickle,
# selectors, socket, subprocess) is imported where they start: ``gps validate`` and ``--help``
# start without it.
if TYPE_CHECKING:
    import socket
    import subprocess
    from concurrent.futures import Future

_T = TypeVar("_T")

#: The signals that stop a command: Ctrl-C, and ``kill`` / a CI runner's cancel.
_STOPS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s)
_NAMES = {getattr(signal, "SIGINT", -1): "Ctrl-C", getattr(signal, "SIGTERM", -2): "SIGTERM"}
_CAN_MASK = hasattr(signal, "pthread_sigmask")


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


# -- 1. helper threads ---------------------------------------------------------------------------


@contextmanager
def held_signals() -> Iterator[None]:
    """SIGINT and SIGTERM blocked in this thread for the block (threads started inside too)."""
    if not _CAN_MASK:
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(_STOPS))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def start_thread(
    target: Callable[..., object], *, name: str, args: tuple[Any, ...] = ()
) -> threading.Thread:
    """Start a daemon thread running ``target(*args)`` with SIGINT and SIGTERM blocked (rule 1)."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    with held_signals():
        thread.start()
    return thread


_Job = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...]]


class DaemonPool:
    """``submit`` and ``shutdown`` as ``ThreadPoolExecutor`` has them, on daemon threads.
    ``ThreadPoolExecutor`` joins at exit, so a stuck read would hold Ctrl-C's exit (SPEC 8: two
    seconds); ``shutdown`` here waits a bounded time only."""

    def __init__(self, max_workers: int, *, thread_name_prefix: str = "worker") -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[..., _T], *args: Any) -> Future[_T]:
        from concurrent.futures import Future

        if self._closed:
            raise RuntimeError("the pool is shut down")
        future: Future[_T] = Future()
        self._jobs.put((future, fn, args))
        if len(self._threads) < self._max:
            name = f"{self._prefix}_{len(self._threads)}"
            self._threads.append(start_thread(self._work, name=name))
        return future

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # the future carries it to the caller
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, *, cancel_futures: bool = False, timeout: float | None = None) -> bool:
        """No more jobs (with ``cancel_futures``, the queued ones are dropped, else they run);
        waits for the workers at most ``timeout`` seconds (for ever if ``None``); whether all
        have ended."""
        self._closed = True
        while cancel_futures:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job[0].cancel()
        for _ in self._threads:
            self._jobs.put(None)
        end = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            thread.join(None if end is None else max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)


# -- 2. interrupts -------------------------------------------------------------------------------


def _stop(signum: int, frame: object) -> None:
    """The first SIGINT or SIGTERM: every later one is ignored, this one stops the command."""
    ignore_interrupts()
    raise Interrupted(signum, _NAMES.get(signum, f"signal {signum}"))


#: The stop signal that came before the command started (``hold_interrupts``), if one did.
_held: list[int] = []


def _hold(signum: int, frame: object) -> None:
    if not _held:
        _held.append(signum)


def hold_interrupts() -> None:
    """A console script's first call: until the command starts a SIGINT or SIGTERM is held for
    it (``interrupts`` raises it); after the command, one is ignored."""
    if _in_main_thread():
        for s in _STOPS:
            signal.signal(s, _hold)


@contextmanager
def interrupts() -> Iterator[None]:
    """In the main thread, SIGINT and SIGTERM raise ``Interrupted`` in the block (rule 2); once
    one came, they stay ignored until exit. Elsewhere the block runs as it is."""
    if not _in_main_thread():
        yield
        return
    previous = {s: signal.signal(s, _stop) for s in _STOPS}
    try:
        if _held:
            _stop(_held.pop(), None)
        yield
    finally:
        if all(signal.getsignal(s) is _stop for s in _STOPS):
            for s, handler in previous.items():
                signal.signal(s, handler)


def ignore_interrupts() -> None:
    """Ignore SIGINT and SIGTERM from now on: a late Ctrl-C must not break the exit."""
    if _in_main_thread():
        for s in _STOPS:
            signal.signal(s, signal.SIG_IGN)


# -- 3. worker processes -------------------------------------------------------------------------

#: The package's own folder's parent: first on a worker's path, so that it runs this very code.
_ROOT = str(Path(__file__).resolve().parent.parent)
_HEADER = struct.Struct("!Q")
#: A message larger than this is no message of ours (a damaged stream): the worker is lost.
MAX_MESSAGE = 1 << 31
_LIVE: set[Worker] = set()
_LIVE_LOCK = threading.Lock()


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        try:
            return max(1, len(affinity(0)))
        except OSError:  # pragma: no cover - a platform that lists it but will not tell
            pass
    return os.cpu_count() or 1


def why_no_workers() -> str | None:
    """Why worker processes cannot be started here, or ``None`` when they can."""
    if os.name != "posix":
        return "worker processes are used on POSIX systems only"
    if getattr(sys, "frozen", False):
        return "this Python is a frozen application, which cannot run a module of its own"
    if not sys.executable or not os.access(sys.executable, os.X_OK):
        return "the Python executable of this process cannot be found (sys.executable)"
    return None


def worker_setup(fd: int) -> Channel:
    """The first call of a worker's ``main``: Ctrl-C is for the parent to handle (rule 3); its
    channel to the parent, on ``fd``."""
    import socket

    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _CAN_MASK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, set(_STOPS))
    return Channel(socket.socket(fileno=fd))


class WorkerLost(Exception):
    """A worker process ended, or its socket broke, before it answered."""


class Channel:
    """Length-prefixed pickles over one end of a socket pair (a worker and its parent)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: object) -> None:
        import pickle

        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.sock.sendall(_HEADER.pack(len(data)) + data)
        except OSError as err:
            raise WorkerLost(f"the other end is gone ({err.strerror or err})") from None

    def recv(self) -> Any:
        import pickle

        (size,) = _HEADER.unpack(self._exactly(_HEADER.size))
        if size > MAX_MESSAGE:
            raise WorkerLost("a damaged message")
        return pickle.loads(self._exactly(size))

    def _exactly(self, n: int) -> bytes:
        chunks: list[bytes] = []
        while n:
            try:
                chunk = self.sock.recv(min(n, 1 << 20))
            except OSError as err:
                raise WorkerLost(f"the other end is gone ({err.strerror or err})") from None
            if not chunk:
                raise WorkerLost("the other end closed its socket")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.sock.close()


class Worker(Channel):
    def __init__(self, process: subprocess.Popen[bytes], sock: socket.socket) -> None:
        super().__init__(sock)
        self.process = process

    def stop(self, *, kill: bool) -> None:
        """End the worker (at once if ``kill``), reap it and close its channel."""
        try:
            if kill and self.process.poll() is None:
                self.process.kill()
            self.process.wait()
        finally:
            self.close()
            with _LIVE_LOCK:
                _LIVE.discard(self)


class WorkerGroup:
    """The workers of one task, killed on the way out unless ``finish``-ed, then reaped."""

    def __init__(self) -> None:
        self.workers: list[Worker] = []
        self._finished = False

    def __enter__(self) -> WorkerGroup:
        return self

    def spawn(self, module: str) -> Worker:
        """Start ``module``'s ``main(fd)`` in a fresh interpreter (rule 3), with a channel to it,
        which the group stops. Raises ``OSError`` when it cannot be started (the caller then works
        alone)."""
        import socket
        import subprocess

        ours, theirs = socket.socketpair()
        code = (
            f"import sys; sys.path.insert(0, {_ROOT!r}); "
            f"from {module} import main; main({theirs.fileno()})"
        )
        try:
            with held_signals():  # no Ctrl-C between the start and the listings below
                process = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", code],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                worker = Worker(process, ours)
                with _LIVE_LOCK:
                    _LIVE.add(worker)
                self.workers.append(worker)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return worker

    def finish(self) -> None:
        """Every worker was told to end: it is waited for, not killed."""
        self._finished = True

    def ready(self, among: Iterable[Worker]) -> list[Worker]:
        """The workers of ``among`` with a message to read (blocks until there is one)."""
        import selectors

        with selectors.DefaultSelector() as sel:
            for w in among:
                sel.register(w, selectors.EVENT_READ)
            return [key.fileobj for key, _ in sel.select()]  # type: ignore[misc]

    def __exit__(self, *exc: object) -> None:
        with held_signals():  # the clean-up runs to its end
            for worker in self.workers:
                worker.stop(kill=not self._finished)


def live_workers() -> int:
    with _LIVE_LOCK:
        return len(_LIVE)


# -- 4. the exit ---------------------------------------------------------------------------------


def quick_exit(code: object) -> None:
    """End the process now with ``code``, skipping the interpreter's teardown (40 ms after
    ``gps validate``, ``bench/bench_gps.py``); stdout and stderr are flushed.

    Returns, for the usual exit, while a thread or worker runs, a stream cannot be flushed,
    ``code`` is a message, or ``certifi`` has an exit handler. Only the console scripts call it.
    """
    if code is not None and type(code) is not int:
        return
    if threading.active_count() != 1 or live_workers():
        return
    if "certifi" in sys.modules:
        return  # its exit handler removes the CA file it extracts when run from a zip (zipapp)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: started with it closed (>&-)
                stream.flush()
    except Exception:  # any trouble with a stream: the usual exit meets and reports it
        return
    _end_process(code or 0)


_end_process = os._exit  # replaced by the tests


# -- 5. process knobs ----------------------------------------------------------------------------


#: The output streams whose reader has gone (a broken pipe: ``| head`` read what it wanted), held
#: weakly and found by identity: a caller's progress stream may be unhashable, or equal to another.
_GONE: list[Callable[[], Any]] = []
#: Whether the process is a console script's (``stand_in_for_closed_streams``): its stdout and
#: stderr are then the tool's own, and a gone one's descriptor may be pointed elsewhere.
_OWN_STREAMS = False


def reader_gone(stream: Any) -> bool:
    """Whether ``stream``'s reader has gone (``drop_output``): nothing more is written to it."""
    return any(held() is stream for held in _GONE)


def drop_output(stream: Any) -> None:
    """``stream``'s reader has gone (a broken pipe): it is marked, and if it is the process's
    stdout or stderr and the process a console script's (``stand_in_for_closed_streams``), its
    descriptor is sent to the null device from now on, so that what is left in its buffer, and
    the exit's flush, find a reader and raise nothing. A caller's own stream (``progress=``), and
    the descriptors of a program that uses the package, are left alone: it still uses them."""
    try:
        held: Callable[[], Any] = weakref.ref(stream)
    except TypeError:  # takes no weak reference: held for good
        held = functools.partial(_same, stream)
    _GONE[:] = [h for h in _GONE if h() is not None] + [held]
    if not _OWN_STREAMS or not any(stream is std for std in (sys.__stdout__, sys.__stderr__)):
        return
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a file: nothing to do
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def _same(stream: Any) -> Any:
    return stream


def say(stream: Any, text: str) -> None:
    """``text``, a line, to ``stream`` (progress on stderr), flushed; dropped once its reader has
    gone, or the process's stderr can take no more (a full disk): the work goes on, unshown."""
    if reader_gone(stream):
        return
    try:
        stream.write(text + "\n")
        stream.flush()
    except OSError as err:
        if not output_failed(stream, err, command=False):
            raise


def output_failed(stream: Any, err: OSError, *, command: bool = True) -> bool:
    """``stream`` failed a write with ``err``: whether that is the end of it, dropped from now on
    (``drop_output``) with nothing said: its reader has gone (a broken pipe), or it is the
    process's stderr (a full disk: nowhere is left to say it). Any other failure is the
    command's error (stdout on a full disk: the output is lost), and a ``command``'s stdout is
    dropped too (its error is said, and never flushed again); progress (``say``) on a program's
    stdout is left to it."""
    ended = err.errno == errno.EPIPE or (stream is sys.stderr and stream is not None)
    if ended or (command and stream is sys.stdout):
        drop_output(stream)
    return ended


def stand_in_for_closed_streams() -> None:
    """The console scripts' first call: the process's stdout and stderr are the tool's own from
    now on (``drop_output`` may point them at the null device). One closed as the process started
    (``>&-``, ``2>&-``: Python left it ``None``) is the null device (so that no file opened later
    takes its number, and nothing written to it lands in that file), and ``sys.stdout`` or
    ``sys.stderr`` a stream on it: the command runs in full, as with ``>/dev/null``, and exits
    with its outcome's code. A descriptor that is open (a host's ``None`` stream) is left alone."""
    global _OWN_STREAMS
    _OWN_STREAMS = True
    for name, fd in (("stdout", 1), ("stderr", 2)):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:  # closed: the null device takes its number
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            stream = open(fd, "w", encoding="utf-8", closefd=False)  # (kept open for good)
        else:
            stream = open(os.devnull, "w", encoding="utf-8")
        setattr(sys, name, stream)


@contextmanager
def fast_thread_switching(interval: float = 0.0001) -> Iterator[None]:
    """A shorter thread switch interval (a decompressing thread needs the GIL back often)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, interval))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection in the block (many new objects, none in a cycle)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
