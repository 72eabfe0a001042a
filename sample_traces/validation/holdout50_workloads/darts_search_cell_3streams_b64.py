"""One normal cell of a DARTS supernet (Liu, Simonyan and Yang, 2019) during architecture search,
for 64 CIFAR images at 32 x 32 and 16 channels, its candidate operations split by kind over three
side streams (fiftieth hold-out: differentiable architecture search, every one of the 14 edges
computing all 8 candidate operations weighted by the softmax of its architecture parameters, some
600 light kernels of a few hundred to a few thousand blocks, joined four times), as the authors'
``model_search.py`` lays it out: the inputs s0 and s1, (64, 48, 32, 32) each (the stem's output,
as the first cell sees it), each through ``ReLU`` + ``Conv2d(48, 16, 1, bias=False)`` +
BatchNorm; then 4 intermediate nodes, node i the sum over its 2 + i incoming edges (from s0, s1
and the earlier nodes) of the mixed operation, sum_k softmax(alpha_e)_k op_k(x), over the 8
primitives: ``none`` (x times 0), 3 x 3 max and average pooling (``count_include_pad=False``) each
+ BatchNorm, ``skip_connect`` (identity), ``sep_conv_3x3`` and ``sep_conv_5x5`` (ReLU, depthwise
k x k, pointwise 1 x 1, BatchNorm, ReLU, depthwise, pointwise, BatchNorm) and ``dil_conv_3x3`` and
``dil_conv_5x5`` (ReLU, depthwise k x k with dilation 2, pointwise, BatchNorm). Every BatchNorm is
``affine=False`` and, as in the search's forward, normalizes with the batch's statistics (no
running statistics kept). Per node, three side streams: stream 1 the separable convolutions of
every incoming edge (16 kernels an edge, the long branch), stream 2 the dilated convolutions (8),
stream 3 the pools, the skip and the zero (a handful); each returns its weighted partial sum and
the node, after the join on the current stream, is their sum. The cell's output is the 4 nodes
concatenated, (64, 64, 32, 32). The architecture parameters' softmax, (14, 8), is taken once a
step. bf16 on a GPU, no gradients. Fork and join are the project's ``fork_join`` (``wait_stream``,
and ``record_stream`` on the branch outputs outside capture). Inputs: s0 and s1 (64, 48, 32, 32)
and the architecture parameters (14, 8) fp32. Returns the cell output (64, 64, 32, 32).

    traceinspect profile darts_search_cell_3streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

NODES, PRIMITIVES = 4, 8
# the primitives' columns in the architecture parameters
NONE, MAX_POOL, AVG_POOL, SKIP, SEP3, SEP5, DIL3, DIL5 = range(PRIMITIVES)


def bn(c: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(c, affine=False, track_running_stats=False)


def sep_conv(c: int, k: int) -> nn.Sequential:
    return nn.Sequential(
        nn.ReLU(),
        nn.Conv2d(c, c, k, padding=k // 2, groups=c, bias=False),
        nn.Conv2d(c, c, 1, bias=False),
        bn(c),
        nn.ReLU(),
        nn.Conv2d(c, c, k, padding=k // 2, groups=c, bias=False),
        nn.Conv2d(c, c, 1, bias=False),
        bn(c),
    )


def dil_conv(c: int, k: int) -> nn.Sequential:
    return nn.Sequential(
        nn.ReLU(),
        nn.Conv2d(c, c, k, padding=k - 1, dilation=2, groups=c, bias=False),
        nn.Conv2d(c, c, 1, bias=False),
        bn(c),
    )


class Edge(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.max_pool = nn.Sequential(nn.MaxPool2d(3, 1, 1), bn(c))
        self.avg_pool = nn.Sequential(nn.AvgPool2d(3, 1, 1, count_include_pad=False), bn(c))
        self.sep3, self.sep5 = sep_conv(c, 3), sep_conv(c, 5)
        self.dil3, self.dil5 = dil_conv(c, 3), dil_conv(c, 5)

    def sep(self, x: Tensor, w: Tensor) -> Tensor:
        return w[SEP3] * self.sep3(x) + w[SEP5] * self.sep5(x)

    def dil(self, x: Tensor, w: Tensor) -> Tensor:
        return w[DIL3] * self.dil3(x) + w[DIL5] * self.dil5(x)

    def light(self, x: Tensor, w: Tensor) -> Tensor:
        out = w[NONE] * x.mul(0.0) + w[SKIP] * x
        return out + w[MAX_POOL] * self.max_pool(x) + w[AVG_POOL] * self.avg_pool(x)


class SearchCell(nn.Module):
    def __init__(self, cin: int, c: int) -> None:
        super().__init__()
        self.pre0 = nn.Sequential(nn.ReLU(), nn.Conv2d(cin, c, 1, bias=False), bn(c))
        self.pre1 = nn.Sequential(nn.ReLU(), nn.Conv2d(cin, c, 1, bias=False), bn(c))
        self.edges = nn.ModuleList(Edge(c) for i in range(NODES) for _ in range(2 + i))


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, cin, c = (4, 8, 12, 4) if smoke else (64, 32, 48, 16)
    dtype = low_precision(device)
    cell = SearchCell(cin, c).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 3)

    def partial(kind: str, states: list[Tensor], first: int, weights: Tensor) -> Tensor:
        out = None
        for j, x in enumerate(states):
            edge = cell.edges[first + j]
            y = getattr(edge, kind)(x, weights[first + j])
            out = y if out is None else out + y
        assert out is not None
        return out

    @torch.no_grad()
    def step(s0: Tensor, s1: Tensor, alphas: Tensor) -> Tensor:
        weights = torch.softmax(alphas, dim=-1).to(dtype)
        states = [cell.pre0(s0), cell.pre1(s1)]
        first = 0
        for _ in range(NODES):
            seen = list(states)
            parts = fork_join(
                device,
                streams,
                [
                    lambda seen=seen, first=first: partial("sep", seen, first, weights),
                    lambda seen=seen, first=first: partial("dil", seen, first, weights),
                    lambda seen=seen, first=first: partial("light", seen, first, weights),
                ],
            )
            states.append(parts[0] + parts[1] + parts[2])
            first += len(seen)
        return torch.cat(states[2:], dim=1)

    edges = sum(2 + i for i in range(NODES))
    inputs = [
        (
            torch.randn(batch, cin, side, side, device=device, dtype=dtype),
            torch.randn(batch, cin, side, side, device=device, dtype=dtype),
            1e-3 * torch.randn(edges, PRIMITIVES, device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"DARTS search cell: {NODES} nodes, {edges} mixed edges x {PRIMITIVES} ops, C{c} "
        f"{side}x{side}, b{batch}, 3 side streams"
    )
    return Built(step, inputs, description, [cell])


if __name__ == "__main__":
    main(build, __doc__)
