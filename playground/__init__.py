"""TensorRT Layer Playground: each TensorRT layer declared once, built for real, checked against NumPy."""

from .base.errors import PlaygroundError, ValidationError  # noqa: F401
