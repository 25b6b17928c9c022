"""The dispatch mode that follows what PyTorch computes by itself (`torch_result`), in this
process: a kernel's write is a write no ATen op sees, made here through numpy."""

from __future__ import annotations

import torch

from validators.kernelbench.provenance import make_watch


class Launches:
    """The emulator's launch counter, advanced by hand where a kernel would have run."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> int:
        return self.n


def kernel_write(t: torch.Tensor, values: torch.Tensor) -> None:
    t.numpy()[...] = values.numpy()  # through the pointer, as a kernel writes


def watched(inputs: list[torch.Tensor], launches: Launches | None = None):
    w = make_watch(launches)
    w.start(inputs)
    return w


def test_a_result_computed_from_the_inputs_alone_is_found_bit_for_bit() -> None:
    x = torch.randn(64)
    w = watched([x])
    with w:
        y = torch.relu(x) * 2
    found = w.nearest(y.clone())
    assert found is not None
    t, op, exact = found
    assert exact and op.startswith("aten.mul") and torch.equal(t, y)


def test_a_value_a_kernel_wrote_is_not_pure() -> None:
    launches = Launches()
    x = torch.randn(64)
    computed = x.abs() + 1  # by "the kernel": no op of the watched call made these values
    w = watched([x], launches)
    with w:
        buf = torch.empty_like(x)
        kernel_write(buf, computed)
        launches.n += 1
        y = torch.relu(buf) * 2  # torch after the kernel: on the kernel's data
    assert w.nearest(y) is None


def test_purity_is_by_value() -> None:
    # Bytes equal to a pure value are pure wherever they are: a kernel that writes what torch
    # had computed (a copy) hands on torch's work.
    launches = Launches()
    x = torch.randn(64)
    w = watched([x], launches)
    with w:
        r = torch.tanh(x)
        buf = torch.empty_like(x)
        kernel_write(buf, r)
        launches.n += 1
        y = buf * 2
    found = w.nearest(y)
    assert found is not None and found[2] and found[1].startswith("aten.mul")


def test_views_copies_and_fills_are_not_torch_results() -> None:
    x = torch.randn(8, 8)
    w = watched([x])
    with w:
        a = x.clone()
        b = x.t().contiguous()
        c = torch.zeros_like(x).fill_(3.0)
    for t in (a, b, c):
        assert w.nearest(t) is None


def test_torch_results_survive_a_later_write_into_them() -> None:
    # The kept copy is what torch computed: a kernel that then writes the output in place
    # cannot hide that torch had computed it (nudged below the tolerance, it is the nearest).
    launches = Launches()
    x = torch.randn(32)
    w = watched([x], launches)
    with w:
        y = torch.sigmoid(x)
    expected = y.clone()
    kernel_write(y, y + 1e-6)
    launches.n += 1
    t, op, exact = w.nearest(y)
    assert not exact and op.startswith("aten.sigmoid") and torch.equal(t, expected)


def test_an_out_argument_is_written_not_read() -> None:
    launches = Launches()
    x = torch.randn(16)
    w = watched([x], launches)
    with w:
        dest = torch.empty(16)
        kernel_write(dest, torch.ones(16))
        launches.n += 1
        torch.add(x, 1.0, out=dest)
    found = w.nearest(dest)
    assert found is not None and found[2]


def test_in_place_ops_on_pure_data_are_torch_results() -> None:
    x = torch.randn(16)
    w = watched([x])
    with w:
        y = x.clone()
        y.mul_(3.0).add_(1.0)
    found = w.nearest(y)
    assert found is not None and found[2] and found[1].startswith("aten.add_")


def test_parameters_are_pure_and_integer_outputs_match_exactly_only() -> None:
    weight = torch.randn(4, 16)
    x = torch.randn(16)
    w = watched([x, weight])
    with w:
        idx = torch.argmax(weight @ x, dim=0, keepdim=True)
    found = w.nearest(idx.clone())
    assert found is not None and found[2]
    assert w.nearest(idx + 1) is None  # no tolerance for integers


def test_what_it_cannot_read_is_not_pure_and_never_raises() -> None:
    x = torch.randn(4, 4)
    sparse = (x * 3).to_sparse()
    w = watched([x, sparse])
    with w:
        dense = sparse.to_dense() * 2
        z = torch.complex(x, x) * 2
    assert w.nearest(dense) is None
    found = w.nearest(z.clone())
    assert found is not None and found[2]


def test_each_call_starts_afresh() -> None:
    x = torch.randn(8)
    w = watched([x])
    with w:
        y = torch.exp(x)
    w.start([torch.randn(8)])
    assert w.nearest(y) is None and not w.kept
