"""A whole model's analysis kept per model digest, so that nothing is computed twice: the answer (every node's
verdict and the parser's engine) and ONNX Runtime's tensors of its run, as checked records in the engine cache's
store (`trt.cache.Records`). The CLI and the model page share them: a second open of the same model, by anyone who
shares the cache's directory, reads the answer and loads nothing.

A key holds everything the answer depends on: the model's bytes (their SHA-256, the digest an upload is kept
under), the inputs (the seeded pattern, or the given arrays' digest), whether the engine is built (and then the
TensorRT flavour, version and builder settings), the whole-model budget's settings, ONNX Runtime's version and a
digest of this program's own source (a changed reference never answers from an older one's verdicts).

    analysis(digest, name, load, given, engine, …) → the answer (from the cache, or made and kept)
    tensor(digest, name) → one tensor of the model's seeded run (from the cache, or None)
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from pathlib import Path

import numpy as np

from ..base import budget
from ..base.errors import ValidationError

FORMAT = 1
ANSWER, TENSORS = ".answer", ".tensors"


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of this program's Python source, file by file: the verdicts a version of it gives are its own."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _records():
    from ..trt.cache import Records

    return Records()


def inputs_digest(given: dict[str, np.ndarray] | None) -> str:
    if not given:
        return "seeded"
    h = hashlib.sha256()
    for name in sorted(given):
        a = np.ascontiguousarray(given[name])
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode() + a.tobytes())
    return h.hexdigest()


def _key(kind: str, **parts) -> str:
    import onnxruntime

    # a node refused by one budget may be judged under another, and the run's segments (so a tensor's last bits:
    # `model.stream`) follow PLAYGROUND_MODEL_MAX_MB
    with budget.whole_model():
        limits = [budget.max_elements(), budget.max_macs(), budget.model_max_bytes()]
    blob = json.dumps(
        {"format": FORMAT, "kind": kind, "code": code_digest(), "onnxruntime": onnxruntime.__version__}
        | {"limits": limits}
        | parts,
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:40]


def run_key(digest: str, given=None) -> str:
    return _key("run", model=digest, inputs=inputs_digest(given))


def builder_fingerprint() -> list:
    """What the parser's build depends on, found without importing TensorRT or asking the GPU (a second open would
    spend longer on that than on reading its answer): the backend asked for, each TensorRT module installed (its
    file and when it was written) and the builder settings."""
    import importlib.util
    import os

    from ..trt import engine as eng
    from ..trt.backend import MODULES

    found = []
    for name in MODULES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec and spec.origin else None
        found.append([name, origin, os.stat(origin).st_mtime_ns if origin and os.path.exists(origin) else None])
    return [os.environ.get("PLAYGROUND_BACKEND"), found, vars(eng.BuildSettings.from_env())]


def answer_key(digest: str, given=None, engine: bool = True) -> str:
    built = builder_fingerprint() if engine else None
    return _key("answer", model=digest, inputs=inputs_digest(given), engine=built)


def analysis(
    digest: str,
    name: str,
    load,
    given: dict[str, np.ndarray] | None = None,
    engine: bool = True,
    outputs: dict | None = None,
    progress=None,
) -> dict:
    """The `model` answer for the model of this digest (`load()` gives it, checked and folded, only where the answer
    is not kept): kept, or made by `whole.analyze` and kept with ONNX Runtime's tensors. `answer["cache"]` says which
    ("cached", with the first analysis's seconds, or "analysed"), and any cache file found unreadable."""
    start, notes = time.perf_counter(), []
    store = _records()
    key = answer_key(digest, given, engine)
    answer = _kept_answer(store, key, notes)
    if answer is not None and (outputs is None or _kept_outputs(store, digest, given, answer, outputs, notes)):
        first = answer["seconds"]
        return answer | {
            "model": name,
            "seconds": round(time.perf_counter() - start, 3),
            "cache": {"status": "cached", "first_seconds": first, "notes": notes},
        }
    from . import whole

    with TensorRecord(store, run_key(digest, given)) as record:  # written as the run makes them, none held
        answer = whole.analyze(
            load(), name, given, engine=engine, outputs=outputs, progress=progress, tensors=record.add
        )
        kept = "onnxruntime_error" not in answer and record.finish()  # a run cut short keeps nothing
    answer["seconds"] = round(time.perf_counter() - start, 3)  # loading and folding too: the whole first open
    store.put(key, ANSWER, {}, {"answer": json.dumps(answer, default=str).encode()})
    answer["cache"] = {"status": "analysed", "tensors_kept": kept, "notes": notes + store.warnings}
    return answer


def kept_answer(digest: str) -> dict | None:
    """The model's analysis on its seeded inputs with its engine, where it is kept; else None."""
    return _kept_answer(_records(), answer_key(digest), [])


def _kept_answer(store, key: str, notes: list) -> dict | None:
    record = store.open(key, ANSWER, notes)
    if record is None:
        return None
    with record:
        try:
            answer = json.loads(record.part("answer"))
        except (KeyError, ValueError):
            return None
    ok = isinstance(answer, dict) and isinstance(answer.get("nodes"), list) and isinstance(answer.get("counts"), dict)
    return answer if ok else None


class TensorRecord:
    """ONNX Runtime's tensors of one run, kept as one record (each tensor a part, read alone) as they are handed in
    (`add`), so that none need stay in memory (`Records.writer`)."""

    def __init__(self, store, key: str):
        self.writer, self.header = store.writer(key, TENSORS), {}

    def add(self, tensors: dict) -> None:
        for k, v in tensors.items():
            if isinstance(v, np.ndarray) and v.dtype.kind in "biuf" and k not in self.header:
                a = np.ascontiguousarray(v)
                self.header[k] = [a.dtype.str, list(a.shape)]
                self.writer.add(k, memoryview(a).cast("B"))

    def finish(self) -> bool:
        """The record written; False where it was not (an unwritable directory, or more than the cache's cap)."""
        return self.writer.finish(self.header)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.writer.discard()


def keep_tensors(store, key: str, tensors: dict) -> bool:
    """ONNX Runtime's tensors of one run, kept as one record (`TensorRecord`); False where they were not."""
    with TensorRecord(store, key) as record:
        record.add(tensors)
        return record.finish()


def _read(record, name: str) -> np.ndarray | None:
    spec = record.header.get(name)
    if not (isinstance(spec, list) and len(spec) == 2) or name not in record.parts:
        return None
    try:
        dtype, shape = np.dtype(spec[0]), tuple(int(d) for d in spec[1])
        data = record.part(name)
        return np.frombuffer(data, dtype).reshape(shape)
    except (TypeError, ValueError):
        return None


def _kept_outputs(store, digest, given, answer: dict, outputs: dict, notes: list) -> bool:
    record = store.open(run_key(digest, given), TENSORS, notes)
    if record is None:
        return False
    with record:
        got = {name: _read(record, name) for name in answer.get("output", {})}
    if any(v is None for v in got.values()):
        return False
    outputs.update(got)
    return True


def tensor(digest: str, name: str, given=None) -> np.ndarray | None:
    """The tensor `name` of the model's run on `given` (None: its seeded inputs), as kept; None where not kept."""
    record = _records().open(run_key(digest, given), TENSORS)
    if record is None:
        return None
    with record:
        return _read(record, name)


def run_tensors(digest: str, model, wanted, given=None) -> dict[str, np.ndarray]:
    """The `wanted` tensors of the model's run on its seeded inputs (or `given`), made by ONNX Runtime a segment at a
    time (`stream.run`) and every tensor kept as it comes."""
    from . import stream, whole

    inputs, _ = whole.feeds(model, given)
    found = {}
    with TensorRecord(_records(), run_key(digest, given)) as record:
        for _, _, made in stream.run(model, inputs):
            record.add(made)
            found |= {t: made[t] for t in wanted if t in made}
        record.finish()
    return found


def real_values(model, tensors: tuple[str, ...], digest: str) -> dict[str, np.ndarray]:
    """`whole.real_values` read from the model's kept run (`digest`), or run once and kept for its other nodes."""
    found = {t: tensor(digest, t) for t in tensors}
    if any(v is None for v in found.values()):
        values = run_tensors(digest, model, tensors)
        missing = [t for t in tensors if t not in values]
        if missing:
            raise ValidationError("model", "node", f"the model has no tensor {missing[0]!r}")
        found = {t: values[t] for t in tensors}
    return {t: np.asarray(v, np.float32) for t, v in found.items()}


def model_tensor(digest: str, name: str) -> np.ndarray:
    """The tensor `name` of ONNX Runtime's run of the model of `digest` on its seeded inputs, in float32 (a chain
    opened from the model reads it): as kept, or the model read from the server's store and run once (and kept).
    ValidationError naming input.onnx where this server holds no such model, input.tensor where it has no such
    tensor."""
    from ..base import blobs
    from ..onnx import reading

    found = tensor(digest, name)
    if found is not None:
        return np.asarray(found, np.float32)
    try:
        model = reading.remembered(digest)
    except blobs.Missing as exc:
        raise ValidationError("input", "onnx", f"the model {digest[:12]}… {exc}") from None
    try:
        return real_values(model, (name,), digest)[name]
    except ValidationError as exc:
        raise ValidationError("input", "tensor", exc.rule, name) from None
