"""The leaves and the vocabulary a layer is declared in: `layer.py` (Layer, Input, the contract),
`params.py` (parameters and their kinds), `inputs.py` (a layer's input tensors), `examples.py` (the spec's
examples), `reference.py` (one NumPy function per operation), `precision.py` (the precisions: network side and
emulation), `section.py` (the blocks of a layer's own section), `plots.py` (its charts), `onnx_map.py` (how a layer
meets ONNX, declared in its own file) and `explain.py`, `box.py`, `chunks.py`, `numbers.py`, `colours.py`,
`style.py`, `errors.py`, `budget.py`, `files.py`, `memo.py`, `blobs.py`. Nothing here imports a layer, TensorRT or
Streamlit: every other room stands on this one."""
