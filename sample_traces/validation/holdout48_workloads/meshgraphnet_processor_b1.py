"""A MeshGraphNets forward pass (Pfaff et al., 2021, the encode-process-decode simulator of the
cylinder-flow model) on one triangle mesh of 4,096 nodes (forty-eighth hold-out: a mesh-based
physics GNN that updates edge latents as well as node latents, ten message-passing steps of
gathers, concatenations, three-layer MLPs and a scatter-add): a 64 x 64 grid of nodes with
every cell split into two triangles, 12,033 mesh edges taken in both directions (24,066
directed edges, sender and receiver index lists built at build). Edge features from the mesh
positions in the step: the relative position of sender to receiver (two ``index_select``) and
its norm, (24,066, 3). Node features: the velocity (2) and a one-hot node type (9). Latent size
128; every MLP is the project's ``_blocks.mlp_tower`` with two hidden layers of 128 and ReLU,
followed by a LayerNorm (all but the decoder). Encoder: node MLP 11 -> 128, edge MLP 3 -> 128.
Processor, 10 steps (the paper uses 15), each: the edge MLP 384 -> 128 of [edge, sender node,
receiver node] (two ``index_select`` and a ``cat``) added to the edge latents; the messages
summed at their receivers (``index_add_`` into zeros, (4,096, 128)); the node MLP 256 -> 128 of
[node, summed messages] added to the node latents: some 20 kernels a step. Decoder: MLP 128 ->
128 -> 128 -> 2, added to the input velocity. Some 225 kernels in all, small GEMMs (the largest
24,066 x 384 by 384 x 128; 23 GMAC in all). bf16 on a GPU, eval mode, no gradients, one stream.
Inputs: the velocity (4,096, 2), the node types one-hot (4,096, 9), the mesh positions (4,096,
2) (the grid in [0, 1]^2, jittered), senders and receivers (24,066,) int64. Returns the next
velocity, (4,096, 2).

    traceinspect profile meshgraphnet_processor_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import mlp_tower
from _common import Built, low_precision, main
from torch import Tensor, nn

LATENT, NODE_TYPES, STEPS = 128, 9, 10


def mlp(din: int, dout: int, norm: bool = True) -> nn.Sequential:
    tower = mlp_tower([din, LATENT, LATENT, dout])
    return nn.Sequential(tower, nn.LayerNorm(dout)) if norm else tower


class Processor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.edge = mlp(3 * LATENT, LATENT)
        self.node = mlp(2 * LATENT, LATENT)

    def forward(
        self, h: Tensor, e: Tensor, senders: Tensor, receivers: Tensor
    ) -> tuple[Tensor, Tensor]:
        edge_in = torch.cat([e, h.index_select(0, senders), h.index_select(0, receivers)], dim=-1)
        e = e + self.edge(edge_in)
        summed = torch.zeros_like(h).index_add_(0, receivers, e)
        h = h + self.node(torch.cat([h, summed], dim=-1))
        return h, e


class MeshGraphNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.node_encoder = mlp(2 + NODE_TYPES, LATENT)
        self.edge_encoder = mlp(3, LATENT)
        self.processors = nn.ModuleList(Processor() for _ in range(STEPS))
        self.decoder = mlp(LATENT, 2, norm=False)

    def forward(
        self,
        velocity: Tensor,
        node_type: Tensor,
        mesh_pos: Tensor,
        senders: Tensor,
        receivers: Tensor,
    ) -> Tensor:
        rel = mesh_pos.index_select(0, senders) - mesh_pos.index_select(0, receivers)
        e = self.edge_encoder(torch.cat([rel, rel.norm(dim=-1, keepdim=True)], dim=-1))
        h = self.node_encoder(torch.cat([velocity, node_type], dim=-1))
        for proc in self.processors:
            h, e = proc(h, e, senders, receivers)
        return velocity + self.decoder(h)


def grid_mesh(side: int) -> tuple[Tensor, Tensor]:
    """Senders and receivers of a side x side grid triangulated along one diagonal per cell,
    every edge both ways."""
    idx = torch.arange(side * side).view(side, side)
    pairs = [
        (idx[:, :-1], idx[:, 1:]),  # horizontal
        (idx[:-1, :], idx[1:, :]),  # vertical
        (idx[:-1, :-1], idx[1:, 1:]),  # diagonal
    ]
    a = torch.cat([p.reshape(-1) for p, _ in pairs])
    b = torch.cat([q.reshape(-1) for _, q in pairs])
    return torch.cat([a, b]), torch.cat([b, a])


def build(device: torch.device, smoke: bool) -> Built:
    side = 6 if smoke else 64
    nodes = side * side
    dtype = low_precision(device)
    model = MeshGraphNet().to(device, dtype).eval()
    senders, receivers = (t.to(device) for t in grid_mesh(side))

    @torch.no_grad()
    def step(
        velocity: Tensor, node_type: Tensor, mesh_pos: Tensor, senders: Tensor, receivers: Tensor
    ) -> Tensor:
        return model(velocity, node_type, mesh_pos, senders, receivers)

    coords = torch.linspace(0, 1, side)
    grid = torch.cartesian_prod(coords, coords)
    inputs = []
    for _ in range(2):
        mesh_pos = grid + 0.1 / side * torch.randn(nodes, 2)
        types = torch.randint(0, NODE_TYPES, (nodes,))
        one_hot = torch.nn.functional.one_hot(types, NODE_TYPES)
        velocity = torch.randn(nodes, 2)
        inputs.append(
            (
                velocity.to(device, dtype),
                one_hot.to(device, dtype),
                mesh_pos.to(device, dtype),
                senders,
                receivers,
            )
        )
    description = (
        f"MeshGraphNet, {nodes} nodes, {len(senders)} directed edges, latent {LATENT}, "
        f"{STEPS} message-passing steps, b1"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
