"""The tail of every exported script (playground.network.export): build the network the script's head declares,
with the TensorRT that can build here, and run it on the GPU where one this TensorRT supports is present.

Everything after the MARKER line is copied into the script as it is, after the script's head, which defines
the names below (the values here only let this file be imported, linted and tested on its own).
"""

import argparse
import importlib
import sys

import numpy as np

# Defined by the script's head: the input (`data`: an array, or a dict by input name for a layer of several), the
# parameters, the layer's construction and the precision's code.
data = p = BUILD = TypedNetwork = precision_input = precision_output = None
INPUT_NAMES, OUTPUT_NAME = {"x": "inputT0"}, "outputT0"  # {the layer's input name: the network's}
INDEX_INPUTS = ()  # the inputs that hold indices: no precision's cast or Q/DQ pair
OPTIMIZATION_LEVEL, RTX_HINT, PLAYGROUND_COMMAND = 0, "", ""
trt = None  # tensorrt or tensorrt_rtx: main() picks the one that builds


# -- MARKER: the exported script's text starts here --
class CannotBuild(Exception):
    """No TensorRT here can make a builder: none installed, or full TensorRT on a machine without a GPU it can use."""


def tensorrt_that_builds():
    """(module, logger, builder) of the first of tensorrt, tensorrt_rtx that imports and makes a builder. Full
    TensorRT imports on a machine without a usable GPU but makes no builder there; TensorRT for RTX builds on
    the CPU alone."""
    why_not = []
    for name in ("tensorrt", "tensorrt_rtx"):
        try:
            trt = importlib.import_module(name)
        except ImportError as exc:
            missing = isinstance(exc, ModuleNotFoundError) and exc.name == name
            why_not.append(
                f"{name} is not installed" if missing else f"{name} is installed but does not import ({exc})"
            )
            continue
        logger = trt.Logger(trt.Logger.WARNING)
        try:
            builder = trt.Builder(logger)
        except Exception as exc:  # noqa: BLE001 - "factory function returned nullptr": no GPU this TensorRT can use
            builder, reason = None, f" ({exc})"
        else:
            reason = ""
        if builder is not None:
            for note in why_not:
                if not note.endswith("is not installed"):  # a missing module is no news; a broken one is
                    print(f"note: {note}; building with {name} {trt.__version__}", file=sys.stderr)
            return trt, logger, builder
        why_not.append(f"{name} {trt.__version__} cannot make a builder here{reason}")
    raise CannotBuild("; ".join(why_not))


def network_flags():
    """STRONGLY_TYPED where the flag exists: the network computes in exactly the types it declares (TensorRT 10.x
    networks are weakly typed without it; 11.x and TensorRT for RTX accept the flag and ignore it)."""
    flag = getattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED", None)
    return 0 if flag is None else 1 << int(flag)


class CannotRun(Exception):
    """The engine was built, but this machine cannot run it (no cuda-python, no GPU, a GPU this TensorRT
    does not support)."""


def cuda_check(cudart, result, what):
    """Unpack cuda-python's (error, *values); raise RuntimeError naming the call and the error."""
    error, *values = result if isinstance(result, tuple) else (result,)
    if int(error) != 0:
        name = cudart.cudaGetErrorName(error)[1]
        raise RuntimeError(f"{what} failed: {name.decode() if isinstance(name, bytes) else name}")
    return values[0] if len(values) == 1 else (tuple(values) or None)


def run_on_gpu(logger, engine_bytes):
    """Deserialize and run the engine once on `data`; the output array, or CannotRun saying why not."""
    try:
        from cuda.bindings import runtime as cudart  # cuda-python 12.6+ / 13
    except ImportError as exc:
        raise CannotRun(f"cuda-python is not installed ({exc})") from None
    try:
        if cuda_check(cudart, cudart.cudaGetDeviceCount(), "cudaGetDeviceCount") < 1:
            raise CannotRun("no CUDA GPU on this machine")
        props = cuda_check(
            cudart,
            cudart.cudaGetDeviceProperties(cuda_check(cudart, cudart.cudaGetDevice(), "cudaGetDevice")),
            "cudaGetDeviceProperties",
        )
    except RuntimeError as exc:
        raise CannotRun(f"no usable CUDA GPU ({exc})") from None
    name = props.name.split(b"\0", 1)[0].decode(errors="replace") if isinstance(props.name, bytes) else str(props.name)
    gpu = f"{name.strip()} (compute capability {props.major}.{props.minor})"
    hint = " " + RTX_HINT if trt.__name__ == "tensorrt_rtx" else ""
    try:
        engine = trt.Runtime(logger).deserialize_cuda_engine(engine_bytes)
        context = engine.create_execution_context() if engine is not None else None
    except Exception as exc:  # noqa: BLE001 - TensorRT raises or returns None on a GPU it does not support
        engine = context = None
        hint = f" ({exc}){hint}"
    if context is None:
        raise CannotRun(f"{trt.__name__} {trt.__version__} could not load the engine on {gpu}.{hint}")
    try:
        return execute(cudart, engine, context)
    except Exception as exc:  # noqa: BLE001 - any failure of the run is said with the GPU's name
        raise RuntimeError(f"on {gpu}: {exc}.{hint}") from None
    finally:
        del context, engine


def execute(cudart, engine, context):
    """Copy `data` in, execute_async_v3 on a stream of our own, copy the output back; free everything."""
    if engine.get_tensor_dtype(OUTPUT_NAME) != trt.DataType.FLOAT:
        raise RuntimeError(f"the output is {engine.get_tensor_dtype(OUTPUT_NAME)}, not FLOAT")
    output = np.empty(tuple(context.get_tensor_shape(OUTPUT_NAME)), dtype=np.float32)
    inputs = {INPUT_NAMES[n]: np.ascontiguousarray(a, dtype=np.float32) for n, a in feed().items()}
    host = {**inputs, OUTPUT_NAME: output}
    to_device = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
    to_host = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost
    device, stream = {}, None
    try:
        stream = cuda_check(cudart, cudart.cudaStreamCreate(), "cudaStreamCreate")
        for tensor, array in host.items():
            device[tensor] = cuda_check(cudart, cudart.cudaMalloc(max(array.nbytes, 1)), "cudaMalloc")
            if not context.set_tensor_address(tensor, int(device[tensor])):
                raise RuntimeError(f"set_tensor_address({tensor!r}) failed")
        for tensor, source in inputs.items():
            cuda_check(
                cudart,
                cudart.cudaMemcpyAsync(device[tensor], source.ctypes.data, source.nbytes, to_device, stream),
                "cudaMemcpyAsync (to the GPU)",
            )
        if not context.execute_async_v3(int(stream)):
            raise RuntimeError("execute_async_v3 failed")
        cuda_check(
            cudart,
            cudart.cudaMemcpyAsync(output.ctypes.data, device[OUTPUT_NAME], output.nbytes, to_host, stream),
            "cudaMemcpyAsync (to the host)",
        )
        cuda_check(cudart, cudart.cudaStreamSynchronize(stream), "cudaStreamSynchronize")
    finally:
        if stream is not None:
            cudart.cudaStreamSynchronize(stream)  # nothing queued may still use the buffers we free
        for pointer in device.values():
            cudart.cudaFree(pointer)
        if stream is not None:
            cudart.cudaStreamDestroy(stream)
    return output


def feed():
    """{the layer's input name: array}: `data` is the one input's array, or a dict of them by name."""
    return data if isinstance(data, dict) else {next(iter(INPUT_NAMES)): data}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", metavar="OUT.npy", help="also save the output computed on the GPU here")
    output_path = parser.parse_args(argv).output
    np.set_printoptions(precision=8, linewidth=200, suppress=True)
    global trt
    try:
        trt, logger, builder = tensorrt_that_builds()
    except CannotBuild as why:
        print(f"error: no engine can be built here: {why}", file=sys.stderr)
        print("The playground shows the NumPy reference of this configuration: " + PLAYGROUND_COMMAND, file=sys.stderr)
        return 3
    network = builder.create_network(network_flags())
    precision = p["precision"]
    xs = {n: network.add_input(INPUT_NAMES[n], trt.DataType.FLOAT, a.shape) for n, a in feed().items()}
    xs = {
        n: x if n in INDEX_INPUTS else precision_input(trt, network, x, precision, p["quantize_scale"])
        for n, x in xs.items()
    }
    typed = TypedNetwork(trt, network, precision) if precision in ("FP16", "BF16") else None
    try:  # the construction takes the one input, or the inputs by name
        y = BUILD(trt, typed or network, xs if isinstance(data, dict) else next(iter(xs.values())), p)
        y = precision_output(trt, network, y, precision)
    except Exception as exc:  # noqa: BLE001 - the Python API raises for a construction it refuses
        print(f"error: TensorRT refused the network in {precision}: {exc}", file=sys.stderr)
        return 1
    y.name = OUTPUT_NAME
    network.mark_output(y)
    output_shape = tuple(y.shape)
    print("output shape:", output_shape)  # TensorRT's own shape inference, before the build
    config = builder.create_builder_config()
    config.builder_optimization_level = OPTIMIZATION_LEVEL
    # TF32 is TensorRT's default; FP32 means exact float32 multiplies (the spec's tables on Ampere and later).
    if precision == "TF32":
        config.set_flag(trt.BuilderFlag.TF32)
    else:
        config.clear_flag(trt.BuilderFlag.TF32)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        print("error: TensorRT could not build the engine (its log above says why)", file=sys.stderr)
        return 1
    engine_bytes = bytes(memoryview(serialized))
    print(f"engine: built by {trt.__name__} {trt.__version__}, {len(engine_bytes)} bytes")
    for i, a in enumerate(feed().values()):
        print(f"inputH{i} :", a.shape)
        print(a)
    try:
        output = run_on_gpu(logger, engine_bytes)
    except CannotRun as why:
        print(f"outputH0: {output_shape}, not computed: the engine was built but cannot run here: {why}")
        print("This script computes no NumPy reference; the playground shows one: " + PLAYGROUND_COMMAND)
        return 0
    except RuntimeError as exc:
        print(f"error: running the engine failed {exc}", file=sys.stderr)
        return 1
    print("outputH0:", output.shape)
    print(output)
    if output_path:
        np.save(output_path, output)
        print(f"output saved to {output_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
