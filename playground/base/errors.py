"""Errors the playground reports to people: each names what was wrong and the rule."""


class PlaygroundError(Exception):
    """Base of every error whose message is meant to be shown as is."""


class ValidationError(PlaygroundError, ValueError):
    """A parameter breaks a rule of its layer; raised before TensorRT is called."""

    def __init__(self, layer: str, param: str, rule: str, value=None):
        self.layer, self.param, self.rule, self.value = layer, param, rule, value
        self.stricter = getattr(rule, "why", None)  # see Stricter
        got = "" if value is None else f" (got {_short(value)})"
        super().__init__(f"{layer}.{param}: {rule}{got}")


class Stricter(str):
    """A rule's text for a configuration TensorRT's builder accepts but the playground refuses, with `why` (an
    output of no cells, a result TensorRT does not document). The layer contract's test holds every other rule of
    a layer's check to a configuration TensorRT refuses too."""

    def __new__(cls, rule: str, why: str):
        text = super().__new__(cls, rule)
        text.why = why
        return text


EMPTY_OUTPUT = "TensorRT builds it with an output of 0 cells on that axis: nothing to show"


def _short(value, limit: int = 60) -> str:
    text = repr(value) if not hasattr(value, "shape") else f"array of shape {tuple(value.shape)}"
    return text if len(text) <= limit else text[: limit - 1] + "…"
