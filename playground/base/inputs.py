"""Input tensors for the layer playground: patterns, uploaded images, downloads.

Everything here is a small pure function on arrays or bytes; the Streamlit page
does the widgets and the file handling. Errors meant for the person using the
page are ``InputError``s whose message names the parameter and the broken rule.
"""

from __future__ import annotations

import io
import math
import operator
import re
import struct
from collections.abc import Callable

import numpy as np
from PIL import Image, ImageOps

from . import budget
from .errors import PlaygroundError

__all__ = [
    "InputError",
    "LIMITS",
    "KINDS",
    "KIND_OPTIONS",
    "make_input",
    "image_to_tensor",
    "validate_shape",
    "parse_shape",
    "tile_pattern",
    "centered_ramp",
    "arange_pattern",
    "to_csv",
    "to_npy_bytes",
]


class InputError(PlaygroundError, ValueError):
    """A user-facing input problem: ``str(err)`` is "param: rule"."""

    def __init__(self, param: str, rule: str):
        # Both go into args so the exception survives pickling (e.g. via multiprocessing).
        super().__init__(param, rule)
        self.param = param
        self.rule = rule

    def __str__(self) -> str:
        return f"{self.param}: {self.rule}"


# Dimension bounds (inclusive) and upload caps. Read at call time, so tests and
# the app may adjust them.
LIMITS: dict = {
    "N": (1, 64),  # a model's node may have many channels (ResNet: 2048): the element budget bounds the input
    "C": (1, 4096),
    "D": (1, 512),  # a 3-D convolution's depth, or a model's third of five axes (a ShuffleNet's shuffle: up to 136)
    "H": (1, 512),
    "W": (1, 512),
    "upload_bytes": 10_000_000,
    # Checked from the header before decoding: a tiny compressed file can
    # declare a huge canvas (decompression bomb), and we never need > 512x512.
    "upload_pixels": 40_000_000,
}

# spec_repeat: channel 0's spec pattern in every channel, as the spec's examples with several channels have it
# (their printed tables depend on it); "spec" gives each channel its own plane where the pattern does so (the
# convolution's tile_pattern).
KINDS = ("spec", "spec_repeat", "ramp", "random", "checkerboard", "constant", "image")
# The value options each pattern reads (make_input's keywords): a control of another is not drawn, nor used.
KIND_OPTIONS = {
    "ramp": ("low", "high"),
    "random": ("low", "high", "seed"),
    "checkerboard": ("low", "high"),
    "constant": ("value",),
}

DIM_NAMES = {4: ("N", "C", "H", "W"), 5: ("N", "C", "D", "H", "W")}
SEED_MAX = 2**31 - 1  # what the seed control and a link may hold
D_DEFAULT = 2  # the convolution spec's 3-D example has depth 2


def default_dims(example_shape: tuple) -> dict[str, int]:
    """N, C, (D,) H, W of a layer's example input; D as well where the example is 2-D (the 3-D option)."""
    dims = dict(zip(DIM_NAMES[len(example_shape)], (int(v) for v in example_shape)))
    dims.setdefault("D", D_DEFAULT)
    return dims


_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
# MPO is how PIL labels multi-picture JPEGs (many phone cameras); frame 0 is a plain JPEG.
_ACCEPTED_FORMATS = ("PNG", "JPEG", "MPO")
# 16-bit greyscale PNGs load as these; convert("L") would clip them to 255, not scale.
_WIDE_GREY_MODES = {"I;16": 65535.0, "I;16B": 65535.0, "I;16L": 65535.0, "I": 65535.0}
_BROKEN = "image data is broken or truncated"
_FLOAT32_MAX = float(np.finfo(np.float32).max)


# ---------------------------------------------------------------- validation


def _int(param: str, x) -> int:
    # operator.index takes Python and NumPy ints but refuses 3.0 and "3".
    if isinstance(x, bool):
        raise InputError(param, f"must be an integer (got {x!r})")
    try:
        return operator.index(x)
    except TypeError:
        raise InputError(param, f"must be an integer (got {x!r})") from None


def validate_shape(shape) -> tuple[int, ...]:
    """Return ``shape`` as a tuple of ints, checked against rank 4/5 and LIMITS."""
    bad = InputError("input.shape", f"must be a sequence of 4 (NCHW) or 5 (NCDHW) integers (got {shape!r})")
    if isinstance(shape, (str, bytes)):
        raise bad
    try:
        shape = tuple(shape)
    except TypeError:
        raise bad from None
    names = DIM_NAMES.get(len(shape))
    if names is None:
        raise InputError("input.shape", f"must have rank 4 (NCHW) or 5 (NCDHW) (got rank {len(shape)})")
    dims = []
    for name, x in zip(names, shape):
        n = _int(f"input.{name}", x)
        lo, hi = LIMITS[name]
        if not lo <= n <= hi:
            raise InputError(f"input.{name}", f"must be between {lo} and {hi} (got {n})")
        dims.append(n)
    over = budget.over_elements(tuple(dims), "input", "N, C, " + ("D, " if len(dims) == 5 else "") + "H or W")
    if over:
        raise InputError("input.shape", over)
    return tuple(dims)


def _plane_shape(shape) -> tuple[int, ...]:
    # The pattern helpers are also handy for weights, so they only insist on
    # positive dims with H, W last, not on the input LIMITS.
    dims = tuple(_int("shape", x) for x in shape)
    if len(dims) < 2 or min(dims) < 1:
        raise InputError("shape", f"must have at least 2 dims, all >= 1 (got {dims})")
    return dims


def _f32(param: str, x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise InputError(param, f"must be a number (got {x!r})") from None
    if not math.isfinite(v) or abs(v) > _FLOAT32_MAX:
        raise InputError(param, f"must be a finite float32 number (got {x!r})")
    return v


def _finish(a) -> np.ndarray:
    # Always a fresh, writable, C-contiguous float32 array: broadcast views are
    # read-only and the caller may edit or cache what it gets.
    return np.array(a, dtype=np.float32, order="C", copy=True)


# ---------------------------------------------------------------- spec patterns


def _channels(dims) -> int:
    """How many channels a pattern gives their own plane: axis 1 of an NCHW/NCDHW tensor (a plane or a weight
    of lower rank has none)."""
    return dims[1] if len(dims) >= 4 else 1


def tile_pattern(shape, block=(3, 3)) -> np.ndarray:
    """The convolution spec input: arange(1, 1+bh*bw) as a bh x bw block tiled
    over H, W (cropped). Channel c shows each cell's value c cells further on
    in the block (row-major, wrapping), so up to bh*bw channels differ
    while every value stays a digit 1 … 9 (the powers-of-ten kernel still names
    its cells); channel 0 is the spec's plane. Every n (and depth d) repeats."""
    dims = _plane_shape(shape)
    bh, bw = (_int("block", b) for b in block)
    if bh < 1 or bw < 1:
        raise InputError("block", f"must be two positive integers (got {tuple(block)})")
    h, w = dims[-2:]
    tile = np.arange(1, 1 + bh * bw, dtype=np.float64).reshape(bh, bw)
    cell = (np.arange(h)[:, None] % bh) * bw + np.arange(w)[None, :] % bw  # the block's cell each (h, w) shows
    channels = _channels(dims)
    planes = np.stack([tile.ravel()[(cell + c) % (bh * bw)] for c in range(channels)])
    lead = (1, channels) + (1,) * (len(dims) - 4) if len(dims) >= 4 else ()
    return _finish(np.broadcast_to(planes.reshape(lead + (h, w)) if lead else planes[0], dims))


def centered_ramp(shape) -> np.ndarray:
    """The activation spec input: every H x W plane is arange(-(H*W//2), ...)
    step 1 in row-major order; 3x3 gives exactly arange(-4, 5).reshape(3, 3).
    Alike in every channel, as the spec's PReLU example has it: its lesson is
    one slope per channel on the same values."""
    dims = _plane_shape(shape)
    h, w = dims[-2:]
    start = -((h * w) // 2)
    plane = np.arange(start, start + h * w, dtype=np.float64).reshape(h, w)
    return _finish(np.broadcast_to(plane, dims))


def arange_pattern(shape, start=1) -> np.ndarray:
    """The scale spec input: arange(start, start+size).reshape(shape).
    Integers above 2**24 are not exact in float32; spec shapes are far smaller."""
    dims = _plane_shape(shape)
    first = _f32("start", start)
    return _finish(np.arange(math.prod(dims), dtype=np.float64).reshape(dims) + first)


# ---------------------------------------------------------------- make_input


def make_input(
    kind: str,
    shape: tuple[int, ...],
    *,
    seed: int = 0,
    value: float = 1.0,
    low: float = -4.0,
    high: float = 4.0,
    spec_fn: Callable[[tuple[int, ...]], np.ndarray] | None = None,
    image: bytes | None = None,
) -> np.ndarray:
    """Build an input tensor of exactly ``shape`` (NCHW or NCDHW), float32, C-contiguous.

    Only the keyword arguments that ``kind`` uses are validated.
    """
    if kind not in KINDS:
        raise InputError("input.kind", f"must be one of {', '.join(KINDS)} (got {kind!r})")
    shape = validate_shape(shape)

    if kind in ("spec", "spec_repeat"):
        if spec_fn is None:
            raise InputError("input.spec_fn", f"required for kind {kind!r} (this layer has no spec example)")
        asked = shape if kind == "spec" else shape[:1] + (1,) + shape[2:]  # spec_repeat: channel 0's, broadcast
        out = np.asarray(spec_fn(asked), dtype=np.float32)
        if out.shape != asked:
            raise InputError("input.spec_fn", f"must return shape {asked} (got {out.shape})")
        return _finish(np.broadcast_to(out, shape))
    if kind == "ramp":
        lo, hi = _f32("input.low", low), _f32("input.high", high)
        return _finish(np.linspace(lo, hi, math.prod(shape)).reshape(shape))
    if kind == "random":
        lo, hi = _f32("input.low", low), _f32("input.high", high)
        s = _int("input.seed", seed)
        if s < 0:
            raise InputError("input.seed", f"must be a non-negative integer (got {s})")
        return _finish(np.random.default_rng(s).uniform(lo, hi, size=shape))
    if kind == "checkerboard":
        lo, hi = _f32("input.low", low), _f32("input.high", high)
        h, w = shape[-2:]
        odd = (np.arange(h)[:, None] + np.arange(w)[None, :]) % 2 == 1
        # (h + w) even -> high, so the top-left corner is always `high`.
        return _finish(np.broadcast_to(np.where(odd, lo, hi), shape))
    if kind == "constant":
        return _finish(np.full(shape, _f32("input.value", value)))
    # kind == "image"
    if image is None:
        raise InputError("upload", "required for kind 'image' (no file uploaded)")
    return image_to_tensor(image, shape)


# ---------------------------------------------------------------- images


def _open_image(data: bytes) -> Image.Image:
    """Identify and size-check an upload without decoding its pixels yet."""
    cap_px = LIMITS["upload_pixels"]
    pixel_rule = f"must be at most {cap_px:,} pixels ({cap_px / 1e6:g} megapixels) before resizing"
    try:
        # Restricting formats keeps PIL's other (rarer, riskier) parsers out of reach.
        img = Image.open(io.BytesIO(data), formats=["PNG", "JPEG"])
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        # PIL's own, looser, guard fires on open for extreme headers (the
        # warning only arrives as an exception when warnings are errors).
        raise InputError("upload", f"{pixel_rule} (PIL refused it as a possible decompression bomb: {e})") from None
    except Image.UnidentifiedImageError:
        # A right signature with an unreadable header is damage, not the wrong format.
        if data.startswith((_PNG_MAGIC, _JPEG_MAGIC)):
            raise InputError("upload", f"{_BROKEN} (PIL could not read its header)") from None
        raise InputError("upload", "not a PNG or JPEG image (PIL could not identify it)") from None
    except (OSError, SyntaxError, ValueError, EOFError, struct.error) as e:
        raise InputError("upload", f"{_BROKEN} (header: {e})") from None
    if img.format not in _ACCEPTED_FORMATS:
        raise InputError("upload", f"not a PNG or JPEG image (PIL identified {img.format})")
    w, h = img.size
    if w * h > cap_px:
        raise InputError("upload", f"{pixel_rule} (got {w}x{h} = {w * h:,})")
    return img


def _decode(img: Image.Image) -> Image.Image:
    try:
        img.load()
    except Image.DecompressionBombError as e:  # e.g. an APNG frame bigger than the canvas
        raise InputError("upload", f"image is too large to decode ({e})") from None
    except (OSError, SyntaxError, ValueError, EOFError) as e:
        raise InputError("upload", f"{_BROKEN} ({e})") from None
    try:
        # Phone photos store rotation in EXIF; show the tensor the way the picture looks.
        return ImageOps.exif_transpose(img)
    except Exception:  # noqa: BLE001 - orientation is cosmetic; a bad EXIF block must not reject the image
        return img


def _planes(img: Image.Image, c: int, h: int, w: int) -> list[np.ndarray]:
    """Resized colour planes as H x W arrays in [0, 1]: [L] or [R, G, B]."""
    size, lanczos = (w, h), Image.Resampling.LANCZOS
    if img.mode in _WIDE_GREY_MODES:
        # Resample in float so 16 bits survive; Lanczos can overshoot, hence the clip.
        grey = np.asarray(img.convert("F").resize(size, lanczos), dtype=np.float64)
        return [np.clip(grey / _WIDE_GREY_MODES[img.mode], 0.0, 1.0)]
    if c == 1:
        # PIL's L is ITU-R 601 luma: 0.299 R + 0.587 G + 0.114 B.
        return [np.asarray(img.convert("L").resize(size, lanczos), dtype=np.float64) / 255.0]
    rgb = np.asarray(img.convert("RGB").resize(size, lanczos), dtype=np.float64) / 255.0
    return [rgb[..., i] for i in range(3)]


def image_to_tensor(data: bytes, shape) -> np.ndarray:
    """Decode a PNG/JPEG upload into ``shape``: resized to (W, H), values in [0, 1].

    C == 1 is luminance, C == 3 is R, G, B, other C cycle R, G, B, R, ...;
    the image is repeated over N (and D for rank 5).
    """
    shape = validate_shape(shape)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError("upload", f"must be the file's bytes (got {type(data).__name__})")
    data = bytes(data)
    cap = LIMITS["upload_bytes"]
    if not data:
        raise InputError("upload", "is empty (0 bytes)")
    if len(data) > cap:
        raise InputError("upload", f"must be at most {cap:,} bytes ({cap / 1e6:g} MB) (got {len(data):,} bytes)")
    img = _decode(_open_image(data))
    c, (h, w) = shape[1], shape[-2:]
    planes = _planes(img, c, h, w)
    chw = np.stack([planes[i % len(planes)] for i in range(c)])
    if len(shape) == 5:
        chw = chw[:, None]  # C, 1, H, W: broadcasts along D
    return _finish(np.broadcast_to(chw, shape))


# ---------------------------------------------------------------- text in/out


_SHAPE_ENTRY = re.compile(r"[+-]?[0-9]+")


def parse_shape(text: str) -> tuple[int, ...]:
    """Parse "1,3,6,9" (spaces and surrounding () or [] allowed) and validate it."""
    if not isinstance(text, str):
        raise InputError("shape", f"must be text like '1,3,6,9' (got {type(text).__name__})")
    body = text.strip()
    if body[:1] + body[-1:] in ("()", "[]"):
        body = body[1:-1]
    entries = [e.strip() for e in body.split(",")]
    for e in entries:
        # ASCII digits only: int() would also take '1_0' and other scripts' digits.
        if not _SHAPE_ENTRY.fullmatch(e):
            raise InputError("shape", f"must be comma-separated integers like '1,3,6,9' (got {text!r})")
    return validate_shape(tuple(int(e) for e in entries))


def _index_columns(rank: int) -> list[str]:
    names = DIM_NAMES.get(rank)
    if names is not None:
        return [n.lower() for n in names[:-1]]
    return [f"i{k}" for k in range(rank - 1)]


def to_csv(t: np.ndarray) -> str:
    """One CSV row per innermost row: the leading indices (n,c,[d,]h) then w0..wN.

    Every value parses back to exactly the stored number.
    """
    a = np.asarray(t)
    if a.ndim == 0:
        raise InputError("tensor", "must have at least 1 dimension (got a scalar)")
    if a.dtype.kind not in "biuf":
        raise InputError("tensor", f"must be numeric (got dtype {a.dtype})")
    if a.dtype.kind != "f":
        cell = "%d"
    elif a.dtype.itemsize <= 4:
        # 9 significant digits always round-trip float32, and %-formatting is
        # ~4x faster than NumPy's shortest repr on big tensors.
        cell = "%.9g"
    else:
        cell = "%r"  # Python's float repr: shortest form that round-trips float64
    width = a.shape[-1]
    row_fmt = ",".join([cell] * width)
    lines = [",".join(_index_columns(a.ndim) + [f"w{k}" for k in range(width)])]
    rows = a.reshape(math.prod(a.shape[:-1]), width).tolist()  # not -1: W may be 0
    for index, row in zip(np.ndindex(a.shape[:-1]), rows):
        cells = [str(i) for i in index]
        if width:
            cells.append(row_fmt % tuple(row))
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def to_npy_bytes(t: np.ndarray) -> bytes:
    """The tensor as a .npy file (no pickling, so it is safe to load anywhere)."""
    buf = io.BytesIO()
    np.save(buf, np.asarray(t), allow_pickle=False)
    return buf.getvalue()
