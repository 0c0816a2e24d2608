"""Errors the playground reports to people: each names what was wrong and the rule."""


class PlaygroundError(Exception):
    """Base of every error whose message is meant to be shown as is."""


class ValidationError(PlaygroundError, ValueError):
    """A parameter breaks a rule of its layer; raised before TensorRT is called."""

    def __init__(self, layer: str, param: str, rule: str, value=None):
        self.layer, self.param, self.rule, self.value = layer, param, rule, value
        got = "" if value is None else f" (got {_short(value)})"
        super().__init__(f"{layer}.{param}: {rule}{got}")


def _short(value, limit: int = 60) -> str:
    text = repr(value) if not hasattr(value, "shape") else f"array of shape {tuple(value.shape)}"
    return text if len(text) <= limit else text[: limit - 1] + "…"
