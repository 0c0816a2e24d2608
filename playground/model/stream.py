"""A whole model run by ONNX Runtime a segment at a time, so that what its run holds at once is bounded, not every
tensor of the model together.

The model's nodes, in graph order (ONNX keeps it topological), are cut into consecutive segments, each sized by ONNX's
shape inference (the fed shapes fixed, bytes by element type: `onnx.held`) so that the tensors alive when it starts,
those it makes and its weights stay within a run's share of PLAYGROUND_MODEL_MAX_MB (`run_budget`). Each segment is
extracted as a model of its own by `onnx.utils.Extractor` (its inputs the tensors it reads that the graph is fed or
an earlier segment made, its outputs every tensor it makes) and run by ONNX Runtime (`runtime.session`, the capped
arena); its tensors are handed on as they arrive, and each is dropped once no later node reads it (the graph's own
outputs are kept to the end).

    run(model, inputs) → (ready, values, made) per segment
    mark_all, unreturnable, for_runtime, with_shapes: the model ONNX Runtime runs, and the tensors it hands back

ONNX Runtime's layout optimization (`NchwcTransformer`, ORT_ENABLE_ALL) computes a convolution's neighbours by the
graph they are in: cut into segments, a tensor may differ from one whole run's in its last bits (light_resnet50: 122
of 177 tensors at the default budget, every node's verdict the same); a model of one segment is bit for bit one run.
"""

from __future__ import annotations

import bisect

from ..onnx import held, reading, runtime
from . import upgrade

# A segment's run holds at most this share of the budget (16 MiB of 1024): ONNX Runtime's arena keeps what a run took
# for the next, so small runs keep the process small, and a session costs milliseconds (light_densenet121's run peaked
# at 514 MB with a share of 4, 217 MB with 64, no slower). A node alone past it still makes a segment.
RUN_SHARE = 64


def mark_all(model, names=None):
    """The model with every node's output a graph output (as Polygraphy's `--onnx-outputs mark all`), or those
    `names` alone: ONNX Runtime then hands back every intermediate tensor of one run (or frees all but those)."""
    onnx = reading.library()
    out = onnx.ModelProto()
    out.CopyFrom(model)
    have = {o.name for o in out.graph.output} | unreturnable(model)
    for node in out.graph.node:
        for name in node.output:
            if name and name not in have and (names is None or name in names):
                out.graph.output.append(onnx.ValueInfoProto(name=name))  # ONNX Runtime infers its type
                have.add(name)
    return out


def unreturnable(model) -> set[str]:
    """The tensors ONNX Runtime cannot hand back to NumPy (bfloat16, after a Cast to it): left unmarked."""
    onnx = reading.library()
    bf16 = onnx.TensorProto.BFLOAT16
    if not any(
        n.op_type == "Cast" and any(a.name == "to" and a.i == bf16 for a in n.attribute) for n in model.graph.node
    ):
        return set()
    inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
    return {v.name for v in inferred if v.type.tensor_type.elem_type == bf16}


def for_runtime(model, notes: list | None = None):
    """The model ONNX Runtime runs: the model, or its conversion to an opset it has kernels for (the nodes are still
    read at the model's own opset, as TensorRT's parser reads them); ValidationError where none converts."""
    converted, note = upgrade.for_runtime(model, "the model")
    if note and notes is not None:
        notes.append(note)
    return converted


def with_shapes(model, shapes: dict[str, tuple]):
    """The model with its inputs of these shapes: a named dimension (a batch) fixed, so TensorRT builds it for the
    shape it was fed (no optimization profile to write) and shape inference sizes every tensor of its run."""
    if all(all(d.HasField("dim_value") for d in v.type.tensor_type.shape.dim) for v in model.graph.input):
        return model
    onnx = reading.library()
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for v in out.graph.input:
        if v.name in shapes:
            for d, n in zip(v.type.tensor_type.shape.dim, shapes[v.name]):
                d.dim_value = int(n)  # replaces a dim_param (a oneof)
    return out


def run_budget() -> int:
    """The bytes one segment's run may hold: its weights, the tensors alive when it starts and those it makes."""
    from ..base import budget

    return budget.model_max_bytes() // RUN_SHARE


def _read_names(graph) -> set[str]:
    """The tensors the graph's nodes read, those of its subgraphs (an If's branches) too."""
    out = set()
    for n in graph.node:
        out.update(n.input)
        for a in n.attribute:
            for g in (*([a.g] if a.HasField("g") else []), *a.graphs):
                out |= _read_names(g)
    return out


def _has_subgraph(nodes) -> bool:
    onnx = reading.library()
    kinds = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    return any(a.type in kinds for n in nodes for a in n.attribute)


# the element types a tensor crossing from one segment to the next may have: ONNX Runtime hands it back to NumPy and
# takes it again (not bfloat16 or float8: `unreturnable`)
def _crossable() -> set[int]:
    t = reading.library().TensorProto
    return {
        t.FLOAT, t.DOUBLE, t.FLOAT16, t.BOOL, t.INT8, t.INT16, t.INT32, t.INT64, t.UINT8, t.UINT16, t.UINT32, t.UINT64
    }  # fmt: skip


class Plan:
    """The segments of a model ONNX Runtime runs (`runnable`, its nodes cut at `cuts`) and, per segment, the tensors
    dropped after it and how many of the model's own nodes (`reading.graph_nodes`) are ready to be judged."""

    def __init__(self, model, runnable, inputs: dict):
        onnx = reading.library()
        self.runnable, nodes = runnable, runnable.graph.node
        self.weightless = reading.weightless(runnable)
        self.inferred, self.cuts = None, [0, len(nodes)]
        # a node with a subgraph (If, Loop, Scan) reads tensors of the outer graph its inputs do not name: Extractor
        # would not see them, so such a model runs whole, in one segment (as one Extractor refuses: sparse weights,
        # quantization annotations)
        g = runnable.graph
        if len(nodes) > 1 and not (_has_subgraph(nodes) or g.sparse_initializer or g.quantization_annotation):
            try:
                shaped = with_shapes(self.weightless, {k: v.shape for k, v in inputs.items()})
                self.inferred = onnx.shape_inference.infer_shapes(shaped)
            except Exception:  # noqa: BLE001 - no inference, no sizes to cut by: one segment
                self.inferred = None
        io = [(tuple(n.input), tuple(o for o in n.output if o)) for n in nodes]  # read once: protobuf is slow
        if self.inferred is not None:
            self.cuts = self._cut(io)
        self.segment = [0] * len(nodes)  # each runnable node's segment
        for s, (a, b) in enumerate(zip(self.cuts, self.cuts[1:])):
            self.segment[a:b] = [s] * (b - a)
        made = {o: self.segment[i] for i, (_, outs) in enumerate(io) for o in outs}
        last = len(self.cuts) - 2
        judged = [(tuple(n.input), tuple(o for o in n.output if o)) for n in reading.graph_nodes(model)]
        self.ready, reach = [], 0  # a node of the model is judged once every tensor it writes has arrived
        for _, outs in judged:
            reach = max([reach] + [made.get(o, last) for o in outs])
            self.ready.append(reach)
        use: dict[str, int] = {}  # the last segment a tensor is read in (by ONNX Runtime, or by a node judged)
        for (ins, _), s in [*zip(io, self.segment), *zip(judged, self.ready)]:
            for t in ins:
                use[t] = max(use.get(t, 0), s)
        for (_, outs), s in zip(judged, self.ready):
            for t in outs:
                use[t] = max(use.get(t, 0), s)
        keep = {o.name for o in runnable.graph.output}
        self.drops = [[] for _ in self.cuts[1:]]
        for t, s in use.items():
            if t and t not in keep:
                self.drops[s].append(t)

    def _cut(self, io: list[tuple]) -> list[int]:
        """Where the segments start: greedily as many nodes as fit in `run_budget` (a node alone always makes a
        segment: loading held it to the whole budget), cut only where every tensor crossing the cut can be handed
        back and fed again (a crossable tensor type, as shape inference finds it)."""
        g = self.inferred.graph
        size, weights = held.sizes(self.inferred), held.weight_bytes(g)
        if sum(weights.values()) + sum(size.values()) <= run_budget():
            return [0, len(io)]  # the model fits one run
        alive, last = held.alive(g, size), held.last_reads(g.node)
        types = {v.name: v.type for v in [*g.input, *g.value_info, *g.output]}
        crossable, blocked = _crossable(), [0] * (len(io) + 2)
        for i, (_, outs) in enumerate(io):
            for o in outs:
                t = types.get(o)
                ok = t is not None and t.HasField("tensor_type") and t.tensor_type.elem_type in crossable
                if not ok and last.get(o, -1) > i:  # no cut between its maker and its last reader
                    blocked[i + 1] += 1
                    blocked[last[o] + 1] -= 1
        made = [sum(size.get(o, 0) for o in outs) for _, outs in io]
        reads = [{w for w in ins if w in weights} for ins, _ in io]
        cuts, held_now, seen, open_blocks, cap = [0], alive[0], set(), 0, run_budget()
        for i in range(len(io)):
            open_blocks += blocked[i]
            cost = made[i] + sum(weights[w] for w in reads[i] - seen)  # its outputs, the weights new to the segment
            if i > cuts[-1] and held_now + cost > cap and not open_blocks:
                cuts.append(i)
                held_now, seen = alive[i], set()
                cost = made[i] + sum(weights[w] for w in reads[i])
            held_now += cost
            seen |= reads[i]
        return cuts + [len(io)]


def run(model, inputs: dict, notes: list | None = None):
    """ONNX Runtime's run of the model (`for_runtime`'s conversion where its opset has no kernels, its note
    added to `notes`), a segment at a time (`Plan`). Yields per segment (ready, values, made): how many of the
    model's nodes (`reading.graph_nodes`) now have every tensor they read and write in `values`, the tensors held
    (the inputs, those a later segment or node reads, the graph's outputs, and those just made) and those the
    segment made (the inputs too, with the first). After each yield the tensors no later node reads are dropped
    from `values`. ValidationError where a node passes the arena's cap; ONNX Runtime's own exception else."""
    runnable = for_runtime(model, notes)
    plan = Plan(model, runnable, inputs)
    values = dict(inputs)
    read = _read_names(runnable.graph)  # a weight no node reads is none of the session's (ONNX Runtime drops it)
    weights = {t.name: t for t in runnable.graph.initializer if not reading.small(t) and t.name in read}
    if len(plan.cuts) == 2:  # one segment: the model itself, every tensor marked (no extraction)
        made = _session_run(mark_all(plan.weightless), weights, list(inputs), values)
        yield len(plan.ready), values, dict(inputs) | made
        return
    onnx = reading.library()
    extractor = onnx.utils.Extractor(plan.weightless)
    extractor.value_infos.update((v.name, v) for v in plan.inferred.graph.value_info)  # the shapes inference found
    kept_back = unreturnable(runnable)
    nodes, first = runnable.graph.node, True
    for s, (a, b) in enumerate(zip(plan.cuts, plan.cuts[1:])):
        made_here, reads = [], []
        for n in nodes[a:b]:
            reads += [t for t in n.input if t in values and t not in reads and t not in made_here]
            made_here += [o for o in n.output if o and o not in kept_back]
        for t in reads:  # typed as fed: the arrays themselves say their type and shape
            extractor.value_infos[t] = onnx.helper.make_tensor_value_info(
                t, onnx.helper.np_dtype_to_tensor_dtype(values[t].dtype), values[t].shape
            )
        for t in made_here:  # a tensor inference found no type for: ONNX Runtime infers it (as `mark_all`)
            extractor.value_infos.setdefault(t, onnx.ValueInfoProto(name=t))
        segment = extractor.extract_model(reads, made_here)
        segment.ir_version = max(segment.ir_version, 4)  # its weights need not be graph inputs (IR 3 asks them to be)
        own = {t.name: weights[t.name] for t in segment.graph.initializer if t.name in weights}
        made = _session_run(segment, own, reads, values)
        del segment, own
        done = bisect.bisect_right(plan.ready, s)
        yield done, values, (dict(inputs) | made if first else made)
        first = False
        for t in plan.drops[s]:
            values.pop(t, None)


def _session_run(model, weights: dict, feed: list[str], values: dict) -> dict:
    """Every output of the model from ONNX Runtime on the tensors `feed` names, added to `values` and returned;
    `weights`: the initializers the model holds without their data, by name (their arrays handed to the session)."""
    onnx = reading.library()
    s = runtime.session(model.SerializeToString(), {k: onnx.numpy_helper.to_array(t) for k, t in weights.items()})
    names = [o.name for o in s.get_outputs()]
    try:
        made = dict(zip(names, s.run(names, {t: values[t] for t in feed})))
    except Exception as exc:  # noqa: BLE001 - a node past the run's memory cap is refused by name; else as raised
        raise runtime.over_memory(exc) or exc from None
    values.update(made)
    return made
