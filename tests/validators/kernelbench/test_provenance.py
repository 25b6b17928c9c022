"""The dispatch mode that follows what PyTorch computes by itself (`torch_result`), in this
process: a kernel's write is a write no ATen op sees, made here through numpy."""

from __future__ import annotations

import torch

from validators.kernelbench.provenance import INPUT, make_watch


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
        # Pure values nobody computed: named as such (`INPUT`), never as an op's result.
        found = w.nearest(t)
        assert found is not None and found[1] == INPUT and found[2]
    assert w.nearest(torch.randn(8, 8)) is None


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


def test_sparse_and_complex_values_are_read_and_never_raise() -> None:
    # Sparse tensors are read through their indices and values: torch's work on one is torch's
    # (it was "not pure" before, a way to hide torch's result: test_verify_provenance_holes.py).
    x = torch.randn(4, 4)
    sparse = (x * 3).to_sparse()
    w = watched([x, sparse])
    with w:
        dense = sparse.to_dense() * 2
        z = torch.complex(x, x) * 2
    found = w.nearest(dense.clone())
    assert found is not None and found[2]
    found = w.nearest(z.clone())
    assert found is not None and found[2]


def test_each_call_starts_afresh() -> None:
    x = torch.randn(8)
    w = watched([x])
    with w:
        y = torch.exp(x)
    w.start([torch.randn(8)])
    assert w.nearest(y) is None


# --- the rule on what a run reported (`defences.torch_result_rule`) ---------------------------

def _run(calls: list[tuple[list[torch.Tensor], dict[int, torch.Tensor]]]):
    from validators.kernelbench.answer import AnswerRun, Call

    run = AnswerRun(variant="plain", schedule="forward", poison=None, no_launch=False,
                    follow=True)
    run.calls = [Call(name=f"c{i}", launches=1, error="", form=[], seconds=0.0, outputs=outs,
                      torch_results={k: (t, "aten.op") for k, t in found.items()})
                 for i, (outs, found) in enumerate(calls)]
    return run


def _refs(outputs: list[list[torch.Tensor]], labels: list[str] | None = None):
    from validators.kernelbench.reference import RefCase

    labels = labels or ["normal"] * len(outputs)
    return {f"c{i}": RefCase(name=f"c{i}", label=labels[i], seed=0, args=[], inputs={},
                             outputs=outs) for i, outs in enumerate(outputs)}


def test_rule_a_copy_or_a_nudge_away_from_the_reference_is_torch_s() -> None:
    from validators.kernelbench.defences import torch_result_rule

    ref = torch.randn(256)
    copy = _run([([ref.clone()], {0: ref.clone()})])
    assert torch_result_rule(copy, _refs([[ref]]))[0] == "torch_result"
    nudged = _run([([ref * 1.0001], {0: ref.clone()})])
    rule = torch_result_rule(nudged, _refs([[ref]]))
    assert rule is not None and "to the tolerance" in rule[1]


def test_rule_a_kernel_step_toward_the_reference_is_the_kernel_s() -> None:
    # torch's conv, then a kernel's eval-mode BatchNorm with default statistics (x 0.999995):
    # within the tolerance of torch's result, but the kernel made it the reference's.
    from validators.kernelbench.defences import torch_result_rule

    conv = torch.randn(256)
    ref = conv * 0.999995
    run = _run([([ref.clone()], {0: conv})])
    assert torch_result_rule(run, _refs([[ref]])) is None


def test_rule_judges_each_call_and_each_kind_of_input_set() -> None:
    from validators.kernelbench.defences import torch_result_rule

    a, b = torch.randn(64), torch.randn(64)
    # Kernels for one output of two: they did work.
    one_of_two = _run([([a.clone(), b.clone()], {0: a.clone()})])
    assert torch_result_rule(one_of_two, _refs([[a, b]])) is None
    # Torch's in one call, the kernels' in another call of the same kind of input set: the
    # answer changed what computes after a warm-up.
    one_call_of_two = _run([([a.clone()], {0: a.clone()}), ([b.clone()], {0: b * 0.5})])
    rule = torch_result_rule(one_call_of_two, _refs([[a], [b]]))
    assert rule is not None and "from call to call" in rule[1]
    # ... while on another kind (the kernel an identity on torch's result there) it is not.
    assert torch_result_rule(one_call_of_two, _refs([[a], [b]], ["normal", "signed"])) is None
    both = _run([([a.clone()], {0: a.clone()}), ([b.clone()], {0: b.clone()})])
    assert torch_result_rule(both, _refs([[a], [b]]))[0] == "torch_result"


def test_rule_an_input_handed_back_shows_no_work_of_anyone_s() -> None:
    # A kernel that copies its input where that is the answer (a ReLU of torch.rand values)
    # and torch's result where it is not: no call shows the kernels' work.
    from validators.kernelbench.defences import torch_result_rule
    from validators.kernelbench.provenance import INPUT

    x, y = torch.rand(64), torch.randn(64)
    run = _run([([x.clone()], {0: x.clone()}), ([y.relu()], {0: y.relu()})])
    run.calls[0].torch_results = {0: (x.clone(), INPUT)}
    rule = torch_result_rule(run, _refs([[x], [y.relu()]], ["normal", "signed"]))
    assert rule is not None and "the other 1 returned one of their inputs" in rule[1]
    # With the kernels' work on the signed set, the input handed back is no sign of anything.
    run.calls[1].torch_results = {}
    assert torch_result_rule(run, _refs([[x], [y.relu()]], ["normal", "signed"])) is None


def test_pieces_of_torch_s_result_tiling_the_output_are_found() -> None:
    x = torch.randn(8, 6)
    w = watched([x])
    with w:
        top, bottom = torch.tanh(x[:4]), torch.tanh(x[4:])
    out = torch.cat([top, bottom]).clone()  # as a kernel copying each piece would leave it
    found = w.nearest(out)
    assert found is not None and found[2] and "tanh" in found[1]
    wrong = out.clone()
    wrong[5, 2] += 1
    assert w.nearest(wrong) is None


def test_casts_and_views_of_torch_s_result_are_still_torch_s() -> None:
    x = torch.randn(4, 5)
    w = watched([x])
    with w:
        y = torch.sigmoid(x.double()).float().unsqueeze(0).squeeze(0)
    found = w.nearest(y.clone())
    assert found is not None and found[2] and "sigmoid" in found[1]


def test_an_operator_of_the_answer_s_own_is_followed_inside() -> None:
    @torch.library.custom_op("ckd_test::soft", mutates_args=())
    def soft(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x)

    x = torch.randn(32)
    w = watched([x])
    with w:
        y = torch.ops.ckd_test.soft(x)
    found = w.nearest(y.clone())
    assert found is not None and found[2] and "softplus" in found[1]
