"""ONNX in and out, one job a module: `map.py` how a layer meets ONNX (declared in the layer's own file; it imports
no `onnx`), `reading.py` a model read as hostile input (checked, its constants folded, an upload kept),
`opening.py` a model's node opened as its layer, `writing.py` a configuration exported as a model, `runtime.py`
ONNX Runtime's run of a model against the reference, `opinions.py` ONNX Runtime's and TensorRT's parser's second
opinions on a configuration, `chain.py` a chain as a model and its opinions, `whole.py` a whole model's nodes
judged on their real inputs. Inside this package `import onnx` is the onnx library: imports are absolute, and no
module here is named as a standard module is."""
