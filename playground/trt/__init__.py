"""Everything that talks to TensorRT or the GPU: which TensorRT builds here (`backend`), networks and engines
built from a layer declaration (`engine`), the engine cache on disk (`cache`) and running an engine with
cuda-python (`runner`). Whoever creates a TensorRT object or a device buffer here owns and frees it."""
