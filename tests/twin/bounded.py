"""Runs a snippet in a child process with an address-space limit, so that a test can show a
surface stays within its stated memory and time limits instead of merely finishing.

The child imports what the snippet needs first, then caps its address space at what it uses then
plus `memory_mb`: an allocation past the cap is a MemoryError in the child, not a swapping host.
Time is the child's CPU time around the snippet, which a busy machine does not inflate.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass

_CHILD = """
import json, resource, sys, time
{setup}
def _vm_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
limit = _vm_bytes() + {memory_mb} * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
started = time.process_time()
outcome = {{"error": None}}
try:
    result = (lambda: ({snippet}))()
    outcome["result"] = repr(result)[:2000]
except MemoryError:
    outcome["error"] = "MemoryError"
except BaseException as err:
    outcome["error"] = type(err).__name__ + ": " + str(err)[:2000]
outcome["cpu_s"] = time.process_time() - started
sys.stdout.write(json.dumps(outcome))
"""


@dataclass(frozen=True)
class Bounded:
    """What the snippet did in the child: its result's repr or the exception it raised (type and
    message), and the CPU seconds it took."""

    result: str | None
    error: str | None
    cpu_s: float


def run_bounded(snippet: str, *, setup: str = "", memory_mb: int = 256) -> Bounded:
    """Evaluate the expression `snippet` after `setup` in a child process capped at `memory_mb`
    more address space than the setup left it with."""
    code = _CHILD.format(setup=textwrap.dedent(setup), memory_mb=memory_mb, snippet=snippet.strip())
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0 or not done.stdout:
        raise AssertionError(f"the child process failed ({done.returncode}): {done.stderr[-2000:]}")
    outcome = json.loads(done.stdout)
    return Bounded(outcome.get("result"), outcome["error"], outcome["cpu_s"])
