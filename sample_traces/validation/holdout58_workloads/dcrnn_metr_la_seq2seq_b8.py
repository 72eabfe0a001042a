"""The Diffusion Convolutional Recurrent Neural Network (DCRNN, Li et al., ICLR 2018) forecasting
the next hour of traffic speed on METR-LA's 207 loop detectors for 8 windows: the encoder reads 12
five-minute steps, the decoder predicts 12 more from its own outputs (fifty-eighth hold-out: one
stream of some 2500 kernels in 48 DCGRU cell steps, each two diffusion convolutions of some 20
kernels (a concatenation and permute of the inputs and state, 8 dense 207 x 207 matmuls over the
dual random-walk supports of 45 to 90 MFLOP, the Chebyshev-style recurrences, the growing
concatenation of the 5 diffusion terms, a permute copy and the weight GEMM of 70 to 270 MFLOP) plus
a few gate kernels, in full fp32 (TF32 off), over 0.4 to 4.2 MB tensors: launch-bound throughout, a
long serial chain). Laid out as chnsh/DCRNN_PyTorch's ``DCRNNModel`` with the METR-LA configuration
(``dcrnn_la.yaml``: 207 nodes, ``rnn_units`` 64, ``num_rnn_layers`` 2, ``max_diffusion_step`` 2,
``filter_type`` ``dual_random_walk``, ``input_dim`` 2 (speed and time of day), ``output_dim`` 1,
``seq_len`` 12, ``horizon`` 12) in evaluation (no teacher forcing): ``EncoderModel`` runs the 12
input steps through 2 ``DCGRUCell``s; ``DecoderModel`` starts from the zero GO symbol and the
encoder's states and feeds each step's projection (``Linear(64, 1)`` per node) back in.
``DCGRUCell.forward``: r and u from ``_gconv`` to 128 with ``bias_start`` 1.0 and a sigmoid, c from
``_gconv`` on the input and r times the state, tanh, the new state u h + (1 - u) c. ``_gconv``:
inputs and state reshaped to (batch, 207, .) and concatenated, permuted to (207, size x batch); for
each of the two supports x1 = S x0 then x2 = 2 S x1 - x0, each appended to the stack (``_concat``, a
``torch.cat`` per term), with the reference's reuse of x0 and x1 across the two supports kept as it
is; the stack (5, 207, size, batch) permuted to (batch 207, size 5) and multiplied by the weights
(size 5, out) plus the bias. The supports are the two random-walk transition matrices D^-1 A of the
sensor graph and of its transpose, transposed, held dense here (the reference's ``torch.sparse.mm``
on COO tensors replaced by ``torch.mm`` of the same product); the graph itself is drawn at build as
METR-LA's is built (``gen_adj_mx.py``): 207 random sensor positions in the unit square, road
distances of 1 to 1.6 times their straight-line distances, listed (as the distances file lists them)
only for pairs within 0.25, a Gaussian kernel with the listed distances' standard deviation, entries
below 0.1 set to 0, 1555 nonzeros (the diagonal included, as in METR-LA). fp32 with TF32 off for
matrix multiplications (``torch.backends.cuda.matmul.allow_tf32 = False``, torch's default, set in
build), eval, no gradients, random weights (xavier-normal weights and constant biases, as
``LayerParams`` creates them). Input (two input sets), batch first: the windows (8, 12, 207, 2), the
normalized speed (Gaussian) and the time of day in [0, 1). Returns the predictions (12, 8, 207),
time first as the reference returns them.

    traceinspect profile dcrnn_metr_la_seq2seq_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

NODES, UNITS, LAYERS, DIFFUSION, INPUT_DIM, OUTPUT_DIM, SEQ, HORIZON = 207, 64, 2, 2, 2, 1, 12, 12
LISTED = 0.25  # sensor pairs whose road distance is listed


def sensor_graph(nodes: int, generator: torch.Generator) -> Tensor:
    """gen_adj_mx.py's Gaussian-kernel adjacency on random sensor positions."""
    pos = torch.rand(nodes, 2, generator=generator)
    straight = torch.cdist(pos, pos)
    dist = straight * (1 + 0.6 * torch.rand(nodes, nodes, generator=generator))
    listed = straight < LISTED
    adj = torch.exp(-torch.square(dist / dist[listed].std())) * listed
    adj[adj < 0.1] = 0
    return adj


def random_walk(adj: Tensor) -> Tensor:
    """utils.calculate_random_walk_matrix: D^-1 A."""
    d = adj.sum(1)
    d_inv = torch.where(d > 0, 1 / d, torch.zeros_like(d))
    return d_inv[:, None] * adj


class DCGRUCell(nn.Module):
    def __init__(self, input_dim: int, units: int, supports: list[Tensor], nodes: int) -> None:
        super().__init__()
        self.units, self.nodes, self.supports = units, nodes, supports
        size = (input_dim + units) * (len(supports) * DIFFUSION + 1)
        self.ru_weights = nn.Parameter(nn.init.xavier_normal_(torch.empty(size, 2 * units)))
        self.ru_biases = nn.Parameter(torch.full((2 * units,), 1.0))
        self.c_weights = nn.Parameter(nn.init.xavier_normal_(torch.empty(size, units)))
        self.c_biases = nn.Parameter(torch.zeros(units))

    def gconv(self, inputs: Tensor, state: Tensor, weights: Tensor, biases: Tensor) -> Tensor:
        batch = inputs.shape[0]
        inputs = inputs.reshape(batch, self.nodes, -1)
        state = state.reshape(batch, self.nodes, -1)
        x = torch.cat([inputs, state], dim=2)
        size = x.shape[2]
        x0 = x.permute(1, 2, 0).reshape(self.nodes, size * batch)
        x = x0.unsqueeze(0)
        for support in self.supports:
            x1 = torch.mm(support, x0)
            x = torch.cat([x, x1.unsqueeze(0)], dim=0)
            for _ in range(2, DIFFUSION + 1):
                x2 = 2 * torch.mm(support, x1) - x0
                x = torch.cat([x, x2.unsqueeze(0)], dim=0)
                x1, x0 = x2, x1
        matrices = len(self.supports) * DIFFUSION + 1
        x = x.reshape(matrices, self.nodes, size, batch).permute(3, 1, 2, 0)
        x = torch.matmul(x.reshape(batch * self.nodes, size * matrices), weights)
        x += biases
        return x.reshape(batch, -1)

    def forward(self, inputs: Tensor, hx: Tensor) -> Tensor:
        value = torch.sigmoid(self.gconv(inputs, hx, self.ru_weights, self.ru_biases))
        value = value.reshape(-1, self.nodes, 2 * self.units)
        r, u = torch.split(value, self.units, dim=-1)
        r = r.reshape(-1, self.nodes * self.units)
        u = u.reshape(-1, self.nodes * self.units)
        c = torch.tanh(self.gconv(inputs, r * hx, self.c_weights, self.c_biases))
        return u * hx + (1.0 - u) * c


class DCRNN(nn.Module):
    def __init__(self, supports: list[Tensor], nodes: int) -> None:
        super().__init__()
        self.nodes = nodes
        self.encoder = nn.ModuleList(
            DCGRUCell(INPUT_DIM if i == 0 else UNITS, UNITS, supports, nodes) for i in range(LAYERS)
        )
        self.decoder = nn.ModuleList(
            DCGRUCell(OUTPUT_DIM if i == 0 else UNITS, UNITS, supports, nodes)
            for i in range(LAYERS)
        )
        self.projection_layer = nn.Linear(UNITS, OUTPUT_DIM)

    def forward(self, inputs: Tensor) -> Tensor:
        """inputs (seq_len, batch, nodes * input_dim) -> (horizon, batch, nodes * output_dim)."""
        batch = inputs.shape[1]
        hidden = [inputs.new_zeros(batch, self.nodes * UNITS) for _ in range(LAYERS)]
        for t in range(inputs.shape[0]):
            output = inputs[t]
            for i, cell in enumerate(self.encoder):
                hidden[i] = cell(output, hidden[i])
                output = hidden[i]
        decoder_input = inputs.new_zeros(batch, self.nodes * OUTPUT_DIM)
        outputs = []
        for _ in range(HORIZON):
            output = decoder_input
            for i, cell in enumerate(self.decoder):
                hidden[i] = cell(output, hidden[i])
                output = hidden[i]
            projected = self.projection_layer(output.view(-1, UNITS))
            decoder_input = projected.view(-1, self.nodes * OUTPUT_DIM)
            outputs.append(decoder_input)
        return torch.stack(outputs)


def build(device: torch.device, smoke: bool) -> Built:
    batch, nodes = (2, 12) if smoke else (8, NODES)
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs
    adj = sensor_graph(nodes, torch.Generator().manual_seed(58))
    supports = [random_walk(adj).t().contiguous(), random_walk(adj.t()).t().contiguous()]
    supports = [s.to(device) for s in supports]
    model = DCRNN(supports, nodes).to(device).eval()

    @torch.no_grad()
    def step(windows: Tensor) -> Tensor:
        inputs = windows.permute(1, 0, 2, 3).reshape(SEQ, windows.shape[0], -1)
        return model(inputs).view(HORIZON, windows.shape[0], nodes)

    def make() -> tuple[Tensor]:
        speed = torch.randn(batch, SEQ, nodes, 1, device=device)
        time_of_day = torch.rand(batch, SEQ, 1, 1, device=device).expand(-1, -1, nodes, -1)
        return (torch.cat((speed, time_of_day), dim=-1),)

    inputs = [make() for _ in range(2)]
    nonzeros = int((adj > 0).sum())
    description = (
        f"DCRNN (METR-LA config): {LAYERS}-layer DCGRU seq2seq, {SEQ} in / {HORIZON} out steps, "
        f"{nodes} sensors ({nonzeros} edges), dual random walk K={DIFFUSION}, dense supports, "
        f"b{batch}, fp32 (TF32 off)"
    )
    return Built(step, inputs, description, [model, supports])


if __name__ == "__main__":
    main(build, __doc__)
