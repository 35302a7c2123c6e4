"""Run one fuzz case in a forked child so that a crash or a hang is a test failure.

A segmentation fault, an abort from AddressSanitizer/UBSan or an endless loop inside a
kernel would otherwise kill or stall the whole pytest process. :func:`run_isolated` forks,
runs the call in the child, and sends back a :class:`Outcome`: the value (or a summary of
it, whatever the call returns that pickles), or the exception's type and message. The parent
turns a signal death or a timeout into an AssertionError naming the case.

Fork, not a fresh interpreter: the child inherits the imported modules (numpy, scipy, the
kernels), so a case costs a few milliseconds instead of a second of start-up.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable

#: seconds a single case may take before it counts as a hang (sanitized builds are slower)
TIMEOUT = float(os.environ.get("SPARE_FUZZ_TIMEOUT", "60" if os.environ.get("SPARE_SANITIZED") else "20"))

#: skips a generator that drives pyarrow through its C++ error paths on the sanitizer run
#: (.ci/sanitize): with ASan preloaded into an uninstrumented interpreter, the first C++
#: exception pyarrow throws aborts in ASan's ``__cxa_throw`` interceptor (the real one is not
#: found), whatever the input. Those generators reach no kernel of ours (the store's and the
#: logs' readers are Python over pyarrow), so the normal run, where they do run, is their check.
SKIP_UNDER_SANITIZER = bool(os.environ.get("SPARE_SANITIZED"))

#: exception types a public API may raise for bad input (anything else is a finding)
CLEAN_ERRORS = (ValueError, TypeError)


@dataclass
class Outcome:
    """What a call did in the child: ``value`` or ``(error_type, message)``."""

    value: Any = None
    error_type: type | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.error_type is None

    def check_clean(self, case: str) -> None:
        """Fail unless the call returned or raised one clean error (ValueError/TypeError)
        with a non-empty message."""
        if self.error_type is None:
            return
        assert issubclass(self.error_type, CLEAN_ERRORS), (
            f"{case}: raised {self.error_type.__name__}: {self.message} "
            f"(a user's mistake must raise ValueError or TypeError)")
        assert self.message.strip(), f"{case}: {self.error_type.__name__} without a message"


def run_isolated(fn: Callable[..., Any], *args, case: str = "", timeout: float | None = None,
                 **kwargs) -> Outcome:
    """``fn(*args, **kwargs)`` in a forked child; its Outcome, or AssertionError on a crash or hang."""
    timeout = TIMEOUT if timeout is None else timeout
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 0
        try:
            os.close(r)
            try:
                out = Outcome(value=fn(*args, **kwargs))
                try:
                    payload = pickle.dumps(out)
                except Exception:  # an unpicklable value: report that it returned
                    payload = pickle.dumps(Outcome(value=repr(out.value)[:200]))
            except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
                payload = pickle.dumps(Outcome(error_type=type(exc), message=str(exc)[:2000]))
            with os.fdopen(w, "wb") as f:
                f.write(payload)
        except BaseException:  # noqa: BLE001
            code = 3
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + timeout
    with os.fdopen(r, "rb") as f:
        fd = f.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise AssertionError(f"{case}: no answer within {timeout:g} s (hang)")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                data = os.read(fd, 1 << 16)
                if not data:
                    break
                chunks.append(data)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        raise AssertionError(f"{case}: the process died of signal {signal.Signals(sig).name}")
    if os.WEXITSTATUS(status) != 0 or not chunks:
        raise AssertionError(f"{case}: the child exited with status {os.WEXITSTATUS(status)} and no answer "
                             "(a sanitizer report or a C-level abort; see stderr)")
    return pickle.loads(b"".join(chunks))
