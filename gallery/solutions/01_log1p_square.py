"""Exercise of lesson 01: log(1 + x**2), saving the input."""

import torch


class Log1pSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(x**2)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x / (1 + x**2)
