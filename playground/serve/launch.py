"""Start a process with the C library's allocator set up for TensorRT's builder: the app (scripts/start.sh), the
test suite (scripts/test.sh), the app servers the tests and benchmarks start, the benchmarks themselves.

    python -m playground.serve.launch COMMAND [ARG ...]

Every TensorRT for RTX build allocates a 64 MiB host buffer and zeroes it. glibc hands a block that large back
to the kernel when it is freed, so each build faults it in again, 4 KiB page by 4 KiB page: most of a small
convolution's build. With glibc's `hugetlb` tunable, malloc asks for transparent huge pages on such blocks: 2 MiB
faults, and the build takes less than half as long (`bench/bench_core.py` prints both; README quotes a run). The
memory is still given back after each build. glibc reads its tunables once, when a process starts, so they go into
the environment of a process about to start; other C libraries, and glibc before 2.35, ignore the variable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

VARIABLE = "GLIBC_TUNABLES"
TUNABLES = ("glibc.malloc.hugetlb=1",)  # transparent huge pages for malloc's blocks (THP "madvise" mode or "always")


def _entries(env: Mapping[str, str]) -> list[str]:
    return [t for t in env.get(VARIABLE, "").split(":") if t]


def _name(tunable: str) -> str:
    return tunable.split("=", 1)[0]


def tuned_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (this process's environment by default) with TUNABLES added; a tunable it already sets is kept (so
    `GLIBC_TUNABLES=glibc.malloc.hugetlb=0` turns this off)."""
    env = dict(os.environ if env is None else env)
    have = _entries(env)
    named = {_name(t) for t in have}
    env[VARIABLE] = ":".join(have + [t for t in TUNABLES if _name(t) not in named])
    return env


def untuned_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` without TUNABLES: a process started the way a user starts one (the spec's scripts)."""
    env = dict(os.environ if env is None else env)
    rest = [t for t in _entries(env) if t not in TUNABLES]
    if rest:
        env[VARIABLE] = ":".join(rest)
    else:
        env.pop(VARIABLE, None)
    return env


def restart_tuned() -> None:
    """Run this Python script again, from the start, with TUNABLES, unless its environment already sets each of
    them (a benchmark: its in-process builds are then timed as the app's are)."""
    if tuned_env() != dict(os.environ):
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], tuned_env())


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    os.execvpe(argv[0], argv, tuned_env())


if __name__ == "__main__":
    main(sys.argv[1:])
