"""Exercise of lesson 03: x * exp(x), with exp(x) returned as an extra output."""

import torch


class XExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        exp = torch.exp(x)
        ctx.save_for_backward(x, exp)
        return x * exp, exp

    @staticmethod
    def backward(ctx, grad_out, grad_exp):
        x, exp = ctx.saved_tensors
        # d/dx (x e^x) = (1 + x) e^x, and d/dx e^x = e^x
        return grad_out * (1 + x) * exp + grad_exp * exp


def x_exp(x):
    out, _exp = XExp.apply(x)
    return out
