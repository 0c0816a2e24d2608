"""Engine cache: hits, corruption, concurrency, eviction, and an unusable directory."""

import os
import threading
import time

import pytest

from playground.network.core import evaluate
from playground.trt.cache import EngineCache, decode, encode
from playground.trt.engine import BuildReport


def report(n: int = 1000, status: str = "built") -> BuildReport:
    return BuildReport(
        status=status,
        build_ms=1.0,
        output_shape=[1, 1, 4, 7],
        layers=[{"name": "x", "type": "kgen", "inputs": [], "outputs": [], "tactic": ""}],
        log=[],
        engine=os.urandom(n) if status == "built" else None,
    )


def counting_build(n=1000, delay=0.0):
    calls = []

    def build():
        calls.append(threading.get_ident())
        time.sleep(delay)
        return report(n)

    return build, calls


def test_encode_decode_roundtrip_and_detects_damage():
    r = report()
    blob = encode(r)
    back = decode(blob)
    assert back.engine == r.engine and back.layers == r.layers and back.output_shape == r.output_shape
    for damaged in (blob[:-10], blob[:5], blob[:-1] + bytes([blob[-1] ^ 1]), b"garbage" + blob):
        with pytest.raises(ValueError):
            decode(damaged)


def test_hit_on_revisit_from_memory_and_from_disk(tmp_path):
    build, calls = counting_build()
    cache = EngineCache(tmp_path)
    first, status, _ = cache.get_or_build("k1", build)
    assert status == "built" and len(calls) == 1
    again, status, _ = cache.get_or_build("k1", build)
    assert status == "cached" and again.engine == first.engine
    fresh = EngineCache(tmp_path)  # a new process: only the file remains
    from_disk, status, _ = fresh.get_or_build("k1", build)
    assert status == "cached" and from_disk.engine == first.engine and len(calls) == 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_corrupted_file_is_rebuilt_with_a_note(tmp_path, damage):
    build, calls = counting_build()
    EngineCache(tmp_path).get_or_build("k", build)
    f = tmp_path / "k.engine"
    blob = f.read_bytes()
    f.write_bytes(
        {
            "truncate": blob[: len(blob) // 2],
            "flip": blob[:-1] + bytes([blob[-1] ^ 0xFF]),
            "empty": b"",
            "garbage": b"\x00" * 64,
        }[damage]
    )
    r, status, notes = EngineCache(tmp_path).get_or_build("k", build)
    assert status == "built" and len(calls) == 2 and r.engine
    assert any("unreadable" in n and "rebuilt" in n for n in notes)
    assert decode(f.read_bytes()).engine == r.engine  # the rebuilt file is whole again


def test_concurrent_requests_for_one_key_build_once(tmp_path):
    build, calls = counting_build(delay=0.2)
    cache = EngineCache(tmp_path)
    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get_or_build("same", build))) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert sorted(s for _, s, _ in results) == ["built"] + ["cached"] * 11
    assert len({r.engine for r, _, _ in results}) == 1


def test_concurrent_processes_build_once(tmp_path):
    # Two caches on one directory stand for two processes: the file lock makes the second wait.
    build, calls = counting_build(delay=0.3)
    a, b = EngineCache(tmp_path), EngineCache(tmp_path)
    out = []
    threads = [threading.Thread(target=lambda c=c: out.append(c.get_or_build("p", build)[1])) for c in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and sorted(out) == ["built", "cached"]


def test_eviction_keeps_the_directory_under_its_cap_lru_first(tmp_path):
    size = len(encode(report(1500)))
    cache = EngineCache(tmp_path, cap_bytes=4 * size)  # room for four
    for i in range(4):
        cache.get_or_build(f"e{i}", lambda: report(1500))
        os.utime(tmp_path / f"e{i}.engine", (i, i))  # make the LRU order explicit
    cache.get("e0")  # memory hit does not touch the file …
    cache._memory.clear()
    cache.get("e0")  # … a disk hit does: e0 becomes most recent
    cache.get_or_build("e4", lambda: report(1500))
    names = {p.stem for p in cache.entries()}
    assert cache.disk_bytes() <= 4 * size
    assert names == {"e0", "e2", "e3", "e4"}  # e1 was the least recently used


def test_unwritable_directory_degrades_to_memory_with_a_warning(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = EngineCache(blocker / "cache")
    assert cache.path is None and cache.warnings and "memory only" in cache.warnings[0]
    build, calls = counting_build()
    assert cache.get_or_build("m", build)[1] == "built"
    assert cache.get_or_build("m", build)[1] == "cached" and len(calls) == 1


def test_read_only_directory_degrades_to_memory(tmp_path, monkeypatch):
    # As root, chmod does not stop writes; refuse them the way a read-only mount does.
    import playground.trt.cache as cache_module

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache_module.tempfile, "NamedTemporaryFile", refuse)
    cache = EngineCache(tmp_path)
    assert cache.path is None and "Permission denied" in cache.warnings[0]


def test_write_failure_keeps_the_engine_in_memory(tmp_path, monkeypatch):
    cache = EngineCache(tmp_path)
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    r, status, notes = cache.get_or_build("full", lambda: report())
    assert status == "built" and any("No space left" in n for n in notes)
    assert cache.get_or_build("full", lambda: report())[1] == "cached"
    assert not list(tmp_path.glob(".tmp-*"))  # no half-written file left behind


def test_an_engine_larger_than_the_cap_is_kept_in_memory_with_a_note_and_one_within_it_on_disk(tmp_path):
    size = len(encode(report(5000)))
    cache = EngineCache(tmp_path, cap_bytes=size - 1)
    r, status, notes = cache.get_or_build("big", lambda: report(5000))
    assert status == "built" and not cache.entries()
    assert any("PLAYGROUND_ENGINE_CACHE_MB" in n and "memory only" in n for n in notes)
    assert cache.get_or_build("big", lambda: report(5000))[1] == "cached"  # from memory
    roomy = EngineCache(tmp_path, cap_bytes=size)  # an engine as large as the cap: written, and read back whole
    roomy.get_or_build("fits", lambda: report(5000))
    again, status, _ = EngineCache(tmp_path, cap_bytes=size).get_or_build("fits", lambda: report(1))
    assert status == "cached" and len(again.engine) == 5000


def test_failed_builds_are_not_written_to_disk(tmp_path):
    cache = EngineCache(tmp_path)
    cache.get_or_build("bad", lambda: report(status="failed"))
    assert not cache.entries()


def test_core_revisit_is_a_cache_hit(tmp_path):
    from playground.trt.backend import detect

    if not detect().can_build:
        pytest.skip("no TensorRT module installed")
    cache = EngineCache(tmp_path)
    first = evaluate("convolution", {"stride_nd": "2"}, cache=cache)
    second = evaluate("convolution", {"stride_nd": "2,2"}, cache=cache)
    other = evaluate("convolution", {"stride_nd": "1,2"}, cache=cache)
    assert (first.engine_status, second.engine_status, other.engine_status) == ("built", "cached", "built")
    assert first.cache_key == second.cache_key != other.cache_key
    assert cache.builds == 2
