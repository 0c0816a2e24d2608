"""playground.serve.launch: the allocator settings the app, the tests and the benchmarks start with."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from playground.serve import launch

ROOT = Path(__file__).resolve().parents[1]
OURS = launch.TUNABLES[0]


def test_tuned_env_adds_the_tunables_and_keeps_the_users_own():
    assert launch.tuned_env({})[launch.VARIABLE] == OURS
    env = launch.tuned_env({"PATH": "/bin", launch.VARIABLE: "glibc.malloc.arena_max=2"})
    assert env["PATH"] == "/bin"
    assert env[launch.VARIABLE] == f"glibc.malloc.arena_max=2:{OURS}"
    # one the user sets already keeps the user's value: GLIBC_TUNABLES=glibc.malloc.hugetlb=0 turns this off
    off = launch.tuned_env({launch.VARIABLE: "glibc.malloc.hugetlb=0"})
    assert off[launch.VARIABLE] == "glibc.malloc.hugetlb=0"
    assert launch.tuned_env(env) == env  # adding twice adds nothing


def test_untuned_env_removes_only_ours():
    assert launch.VARIABLE not in launch.untuned_env(launch.tuned_env({"PATH": "/bin"}))
    kept = launch.untuned_env({launch.VARIABLE: f"glibc.malloc.arena_max=2:{OURS}"})
    assert kept[launch.VARIABLE] == "glibc.malloc.arena_max=2"


def _python(code: str, env: dict) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_launch_runs_the_command_with_the_tunables():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "playground.serve.launch",
            sys.executable,
            "-c",
            f"import os; print(os.environ.get({launch.VARIABLE!r}))",
        ],
        cwd=ROOT,
        env=launch.untuned_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert out.strip() == OURS


def test_launch_without_a_command_says_how_it_is_used():
    r = subprocess.run(
        [sys.executable, "-m", "playground.serve.launch"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert r.returncode != 0 and "python -m playground.serve.launch COMMAND" in r.stderr


@pytest.mark.parametrize("user, starts", [(None, 2), ("glibc.malloc.hugetlb=0", 1)])
def test_a_benchmark_restarts_itself_once_with_the_tunables(tmp_path, user, starts):
    script = tmp_path / "bench.py"
    script.write_text(
        textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from playground.serve import launch
        print("start", flush=True)
        launch.restart_tuned()
        print("tunables", os.environ.get({launch.VARIABLE!r}))
    """)
    )
    env = launch.untuned_env()
    if user:
        env[launch.VARIABLE] = user
    out = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out.count("start") == starts
    assert out[-1] == f"tunables {user or OURS}"


HUGE_PAGES_CODE = """
import ctypes, re
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
size = 64 << 20  # what a TensorRT for RTX build allocates, and zeroes
p = libc.malloc(size)
ctypes.memset(p, 0, size)
for block in re.split(r"\\n(?=[0-9a-f]+-[0-9a-f]+ )", open("/proc/self/smaps").read()):
    lo, hi = (int(a, 16) for a in block.split()[0].split("-"))
    if lo <= p < hi:
        print(int(re.search(r"AnonHugePages:\\s+(\\d+) kB", block).group(1)))
"""


def _thp_mode() -> str | None:
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return None
    return text.split("[", 1)[1].split("]", 1)[0] if "[" in text else None


def _glibc_version() -> tuple[int, ...]:
    import platform

    lib, version = platform.libc_ver()
    return tuple(int(v) for v in version.split(".")) if lib == "glibc" else ()


@pytest.mark.skipif(
    _thp_mode() != "madvise" or _glibc_version() < (2, 35),
    reason="needs glibc ≥ 2.35 and transparent huge pages in madvise mode (where the setting "
    "decides; in always mode every such block has them already)",
)
def test_a_build_sized_block_gets_huge_pages_only_with_the_tunables():
    tuned = int(_python(HUGE_PAGES_CODE, launch.tuned_env(launch.untuned_env())))
    plain = int(_python(HUGE_PAGES_CODE, launch.untuned_env()))
    assert plain == 0
    assert tuned >= 32 << 10  # kB: at least half of the 64 MiB block in 2 MiB pages


def test_the_launch_scripts_start_through_it():
    for script in ("scripts/start.sh", "scripts/test.sh"):
        text = (ROOT / script).read_text()
        assert "python -m playground.serve.launch " in text, script
