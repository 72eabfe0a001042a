"""Molecule property prediction with a message-passing graph encoder and a SMILES sequence
encoder on two side streams, joined by an MLP head (thirty-fifth hold-out): 16 molecules,
eval mode, no gradients. Graph branch, on one side stream, in fp32: a batch of 16 graphs of 32
nodes each (512 nodes of 64 features) with 64 directed edges inside each graph (1,024 in all,
a fixed (2, 1024) long edge index drawn at build); 4 message-passing layers, each the message
``Linear(128, 64)`` + ReLU of the concat of the source and destination node states, summed
onto the destinations with ``index_add_`` into a zeroed (512, 64) buffer, and the update, a
residual add of ``Linear(128, 64)`` + ReLU + ``Linear(64, 64)`` of the concat of the node
state and its aggregate; then the per-graph mean, an ``index_add_`` over a fixed node -> graph
index into a zeroed (16, 64) buffer divided by a fixed per-graph node count. Sequence branch,
on the other side stream, bf16 on a GPU: 16 x 96 SMILES token ids through
``nn.Embedding(128, 256)`` plus a learned position embedding (96 x 256), then a 3-layer
``nn.TransformerEncoder`` (post-norm, d_model 256, 8 heads, feed-forward 1024, ReLU, no dropout,
batch_first). Both streams are forked from the current stream and joined back with the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream, in bf16 on a GPU: the pooled graph vector
cast down and projected by ``Linear(64, 256)``, concatenated with the mean over the 96 tokens
(16, 512), and the head ``Linear(512, 256)`` + ReLU + ``Linear(256, 1)``. On a CPU the
branches run in order. Inputs: node features (512, 64) fp32, tokens (16, 96) long. Returns the
(16, 1) predicted property (fp32).

    traceinspect profile graph_and_sequence_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

GNN_LAYERS, SEQ_LAYERS, VOCAB = 4, 3, 128


class MessagePassing(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.message = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU())
        self.update = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, h: Tensor, src: Tensor, dst: Tensor) -> Tensor:
        msg = self.message(torch.cat([h[src], h[dst]], dim=1))  # (edges, d)
        agg = torch.zeros_like(h).index_add_(0, dst, msg)
        return h + self.update(torch.cat([h, agg], dim=1))


class GraphEncoder(nn.Module):
    def __init__(self, d: int, edges: Tensor, node_graph: Tensor, graphs: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(MessagePassing(d) for _ in range(GNN_LAYERS))
        self.register_buffer("src", edges[0].clone())
        self.register_buffer("dst", edges[1].clone())
        self.register_buffer("node_graph", node_graph)
        counts = torch.bincount(node_graph, minlength=graphs).float().unsqueeze(1)
        self.register_buffer("counts", counts)
        self.graphs = graphs

    def forward(self, h: Tensor) -> Tensor:
        for layer in self.layers:
            h = layer(h, self.src, self.dst)
        pooled = h.new_zeros(self.graphs, h.shape[1]).index_add_(0, self.node_graph, h)
        return pooled / self.counts  # (graphs, d)


class SequenceEncoder(nn.Module):
    def __init__(self, tokens: int, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.pos = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, SEQ_LAYERS, enable_nested_tensor=False)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.encoder(self.embed(tokens) + self.pos)


def build(device: torch.device, smoke: bool) -> Built:
    graphs, nodes, edges_per, d_node, tokens, d, heads, ff = (
        (4, 8, 16, 16, 12, 32, 4, 64) if smoke else (16, 32, 64, 64, 96, 256, 8, 1024)
    )
    dtype = low_precision(device)
    offsets = torch.arange(graphs).repeat_interleave(edges_per) * nodes
    edges = torch.randint(0, nodes, (2, graphs * edges_per)) + offsets  # inside each graph
    node_graph = torch.arange(graphs).repeat_interleave(nodes)
    gnn = GraphEncoder(d_node, edges, node_graph, graphs).to(device).eval()  # fp32
    seq = SequenceEncoder(tokens, d, heads, ff)
    proj = nn.Linear(d_node, d)
    head = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, 1))
    low = nn.ModuleList([seq, proj, head]).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor, smiles: Tensor) -> Tensor:
        pooled, states = fork_join(device, streams, [lambda: gnn(x), lambda: seq(smiles)])
        z = torch.cat([proj(pooled.to(dtype)), states.mean(dim=1)], dim=1)
        return head(z).float()

    inputs = [
        (
            torch.randn(graphs * nodes, d_node, device=device),
            torch.randint(0, VOCAB, (graphs, tokens), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"{GNN_LAYERS}-layer message-passing GNN ({graphs * nodes} nodes, "
        f"{graphs * edges_per} edges) beside {SEQ_LAYERS}-layer SMILES encoder, 2 side "
        f"streams, MLP head, b{graphs}",
        [gnn, low],
    )


if __name__ == "__main__":
    main(build, __doc__)
