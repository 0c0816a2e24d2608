"""A whole ONNX model: `whole.py` judges its nodes on their real inputs (the model page), `kept.py` keeps
that analysis and ONNX Runtime's tensors per model digest, `upgrade.py` converts a model for an ONNX Runtime that
has no kernel for its opset, `precision_model.py`, `precision_plan.py` and `precision_lessons.py` run it in a
lower precision and find where it first diverges, `node_data.py` writes the verdicts as Model Explorer's node
data. Inside this package `import onnx` is the onnx library (imports are absolute)."""
