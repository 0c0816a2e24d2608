"""A layer's configuration as ONNX, in and out, one job a module (how a layer meets ONNX is declared in its own
file, in the vocabulary of `base/onnx_map.py`; a whole model is `model/`'s): `reading.py` a model read as hostile
input (checked, its constants folded, an upload kept), `opened.py` what a node opened as its layer is,
`opening.py` opens one (`several.py`: a node of a layer of several inputs), `writing.py` a configuration exported
as a model, `runtime.py` ONNX Runtime's run of a model against the reference, `opinions.py` ONNX Runtime's and
TensorRT's parser's second opinions on a configuration, `chain.py` a chain as a model and its opinions. Inside
this package `import onnx` is the onnx library: imports are absolute, and no module here is named as a standard
module is."""
