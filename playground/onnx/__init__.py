"""ONNX in and out, one job a module: `map.py` how a layer meets ONNX (declared in the layer's file; no `onnx`
import), `opening.py` a model's node opened as its layer, `opinions.py` ONNX Runtime's and TensorRT's parser's
second opinions on a configuration, `chain.py` a chain as a model and its opinions, `whole.py` a whole model's
nodes judged on their real inputs. Inside this package `import onnx` is the onnx library (imports are absolute)."""
