"""What lesson 13 says of the default backend, checked with inductor itself.

Lesson 13 compiles with ``aot_eager_decomp_partition`` (inductor's operator
decompositions and min-cut partitioner, without its code generation) and says
that the default ``inductor`` backend saves the same tensors for its backward
and fails in the same way. A lesson cannot run inductor (it compiles C++ and
costs seconds), so this module builds the lesson's small examples itself and
compiles each with both backends. It is slow: every case compiles with
inductor.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"
BACKENDS = ["aot_eager_decomp_partition", "inductor"]

torch.manual_seed(0)
W = torch.randn(3, 3, dtype=torch.float64)

# f of the lesson's h(x) = f(x) + x**2, and whether the second derivative raises.
CASES = {
    "sin": (torch.sin, True),
    "exp": (torch.exp, True),
    "2 tanh(xW)": (lambda t: 2 * torch.tanh(t @ W), False),
}


def h_second(f, x):
    (grad,) = torch.autograd.grad((f(x) + x**2).sum(), x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_what_is_saved_decides_error_or_silence(case, backend):
    f, raises = CASES[case]
    x = torch.tensor([-0.5, 0.5, 1.0], dtype=torch.float64, requires_grad=True)
    compiled_f = torch.compile(f, backend=backend)
    saved = compiled_f(x).grad_fn.saved_tensors
    assert any(t.requires_grad for t in saved) == raises
    if raises:
        with pytest.raises(RuntimeError) as error:
            h_second(compiled_f, x)
        assert str(error.value) == DOUBLE_BACKWARD
    else:
        second = h_second(compiled_f, x)
        assert torch.equal(second, torch.full_like(x, 2.0))  # the x**2 term alone
        assert not torch.allclose(second, h_second(f, x))


class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


class SoftplusLayer(nn.Module):
    def forward(self, x):
        return Softplus.apply(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_penalty_through_the_compiled_critic_raises(backend):
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(2, 16), SoftplusLayer(), nn.Linear(16, 1, bias=False))
    critic = critic.double()
    compiled = torch.compile(critic, backend=backend)
    x_hat = torch.randn(8, 2, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(compiled(x_hat).sum(), x_hat, create_graph=True)
    penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
    with pytest.raises(RuntimeError) as error:
        torch.autograd.grad(penalty, list(critic.parameters()), allow_unused=True)
    assert str(error.value) == DOUBLE_BACKWARD
