"""A stop signal whose KeyboardInterrupt is swallowed on the way (Python only prints an
exception raised in a finalizer and goes on) still stops the command: the long loops call
``check_stop`` and the command wrapper ends with the interrupt's line and exit status."""

from __future__ import annotations

import gc
import os
import signal

import pytest

from theorylab.core import faults


class _SignalInFinalizer:
    """Its finalizer receives the signal: the KeyboardInterrupt raised there is printed by
    Python ('Exception ignored in ...') and swallowed."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)


def _swallow_a_signal():
    x = _SignalInFinalizer()
    del x
    gc.collect()


#: pytest reports what Python swallows (an "unraisable" exception) as a warning; here the
#: swallowing is the situation under test.
SWALLOWED = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@SWALLOWED
def test_a_swallowed_interrupt_still_ends_the_command(capsys):
    steps = []

    @faults.command("probe")
    def main(argv=None) -> int:
        _swallow_a_signal()
        steps.append("went on")  # the interrupt was swallowed: the code goes on
        for i in range(3):
            faults.check_stop()
            steps.append(i)
        return 0

    assert main([]) == 130
    assert steps == ["went on"]  # the loop stopped at its first check
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("probe: interrupted by SIGINT")


@SWALLOWED
def test_a_swallowed_interrupt_at_the_very_end_is_not_exit_0(capsys):
    @faults.command("probe")
    def main(argv=None) -> int:
        _swallow_a_signal()
        return 0

    assert main([]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("probe: interrupted")


def test_a_handled_interrupt_is_said_once(capsys):
    @faults.command("probe")
    def main(argv=None) -> int:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            signal.pause() if hasattr(signal, "pause") else None
        except KeyboardInterrupt:
            print("probe stopped; resume with: ...", file=__import__("sys").stderr)
            return faults.stop_code()
        return 0

    assert main([]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["probe stopped; resume with: ..."]


def test_check_stop_outside_a_stop_is_silent():
    faults.check_stop()  # nothing pending: returns
    with pytest.raises(KeyboardInterrupt):
        faults._STATE["pending"] = True
        try:
            faults.check_stop()
        finally:
            faults._STATE["pending"] = False
