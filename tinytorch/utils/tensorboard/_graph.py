"""The graph ``SummaryWriter.add_graph`` writes: a model traced by ``torch.fx`` as TensorBoard's ``GraphDef``.

PyTorch traces with ``torch.jit`` and names each node by its module scope (``Net/Linear[fc1]/...``), with
``IO Node`` inputs and outputs and ``_output_shapes`` attributes; this builds the same kind of graph from a
``torch.fx`` trace (leaf modules such as ``Linear`` are one node each, with their class as the op; functions and
methods are ``aten::<name>``; parameters read directly are ``prim::GetAttr``), with shapes from ``ShapeProp``.
"""
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ... import fx
from ...fx.passes.shape_prop import ShapeProp


def _shape_attr(meta):
    metas = [meta] if hasattr(meta, "shape") else list(meta)  # one TensorMetadata, or one per output
    shapes = [TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in m.shape])
              for m in metas if hasattr(m, "shape")]
    return AttrValue(list=AttrValue.ListValue(shape=shapes))


def graph(model, args):
    """(GraphDef, RunMetadata) of ``model`` traced on ``args`` (a tensor or a tuple of tensors)."""
    args = args if isinstance(args, (tuple, list)) else (args,)
    gm = fx.symbolic_trace(model)
    ShapeProp(gm).propagate(*args)
    root = type(model).__name__
    names, nodes = {}, []
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            name, op = f"input/{n.name}", "IO Node"
        elif n.op == "output":
            name, op = "output/output.1", "IO Node"
        elif n.op == "call_module":
            path = n.target.split(".")
            scope, mod = [root], model
            for part in path:
                mod = getattr(mod, part)
                scope.append(f"{type(mod).__name__}[{part}]")
            name, op = "/".join(scope) + f"/{n.name}", f"{type(mod).__module__.replace('tinytorch', 'torch')}." \
                f"{type(mod).__name__}"
        elif n.op == "get_attr":
            name, op = f"{root}/{n.target.replace('.', '/')}", "prim::GetAttr"
        else:
            target = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", str(n.target))
            name, op = f"{root}/{n.name}", f"aten::{target}"
        names[n] = name
        inputs = [names[a] for a in n.all_input_nodes]
        attr = {"attr": AttrValue(s=repr(n.kwargs).encode() if n.kwargs else b"")}
        if "tensor_meta" in n.meta:
            attr["_output_shapes"] = _shape_attr(n.meta["tensor_meta"])
        nodes.append(NodeDef(name=name, op=op, input=inputs, attr=attr))
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stats
