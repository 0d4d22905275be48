"""Shape arithmetic shared by op meta functions and backend kernels: pooling window geometry and the einsum
equation parser. It knows nothing of tensors (operands only need ``ndim``), so backends may import it."""
import builtins
import string

import numpy as np


def pool_out_size(size, k, s, p, d, ceil_mode):
    """Output length of a pooling window sweep (PyTorch's pooling_output_shape)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or the left padding
    return out


def pool_geometry(h, w, kernel_size, stride, padding, dilation, ceil_mode):
    """(oh, ow, extra bottom padding, extra right padding) of a 2-D pooling sweep; the extra padding lets the
    last ceil_mode window be read as a full window."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    oh = pool_out_size(h, kh, sh, ph, dh, ceil_mode)
    ow = pool_out_size(w, kw, sw, pw, dw, ceil_mode)
    eh = max(0, (oh - 1) * sh + dh * (kh - 1) + 1 - (h + 2 * ph))
    ew = max(0, (ow - 1) * sw + dw * (kw - 1) + 1 - (w + 2 * pw))
    return oh, ow, eh, ew


def first_valid_tap(oh, ow, h, w, stride, padding, dilation):
    """Flat h*W+w index of the first in-bounds element of each pooling window, (oh, ow) int64 (NumPy).

    PyTorch's kernel starts each window's argmax there, so a window of only -inf (or only padding) reports
    a real element, never a padding position."""
    def first(n_out, s, p, d):
        start = np.arange(n_out) * s - p
        tap = np.where(start < 0, -(start // d), 0)  # ceil(-start / d) for negative starts
        return start + tap * d
    return (first(oh, stride[0], padding[0], dilation[0]).reshape(oh, 1) * w
            + first(ow, stride[1], padding[1], dilation[1])).astype(np.int64)


def parse_einsum(equation, ops):
    """Parse and check an einsum ``equation`` for operands ``ops`` as ``torch.einsum`` does: returns one
    subscript string per operand and the output's, with '...' replaced by letters the equation does not use.
    RuntimeError (PyTorch's messages) for a subscript outside [a-zA-Z], a stray '.', a wrong operand count, a
    subscript count that does not fit an operand, an output subscript missing from the inputs or repeated."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    if not ops:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    arrow = equation.find("->")
    terms, ell = einsum_terms(equation, 0, len(equation) if arrow < 0 else arrow, True)
    if len(terms) != len(ops):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(ops) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    nell = 0
    for i, (t, op) in enumerate(zip(terms, ops)):
        n = len(t) - (1 if ell[i] else 0)
        if not ell[i] and n != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the number "
                               f"of dimensions ({op.ndim}) for operand {i} and no ellipsis was given")
        if ell[i]:
            if n > op.ndim:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the "
                                   f"number of dimensions ({op.ndim}) for operand {i}")
            nell = max(nell, op.ndim - n)
    used = set(equation)
    free = "".join(ch for ch in string.ascii_letters if ch not in used)[:nell]
    letters = [ch for t in terms for ch in t if ch != "..."]
    if arrow < 0:
        # implicit output: the ellipsis dims, then the letters used once, in alphabetical order (A-Z, a-z)
        rhs = (free if builtins.any(ell) else "") + "".join(sorted(ch for ch in set(letters)
                                                                   if letters.count(ch) == 1))
    else:
        (out,), _ = einsum_terms(equation, arrow + 2, len(equation), False)
        seen = set()
        for ch in out:
            if ch == "...":
                continue
            if ch not in letters:
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for any input "
                                   "operand")
            if ch in seen:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in the output")
            seen.add(ch)
        rhs = "".join(free if ch == "..." else ch for ch in out)
    ins = []
    for t, op in zip(terms, ops):
        k = op.ndim - (len(t) - 1) if "..." in t else 0
        ins.append("".join(free[nell - k:] if ch == "..." else ch for ch in t))
    return ins, rhs


def einsum_terms(eq, start, stop, inputs):
    """The comma-separated terms of ``eq[start:stop]`` as lists of letters and '...' (spaces skipped), and
    whether each has an ellipsis."""
    terms, ell = [[]], [False]
    i = start
    while i < stop:
        ch = eq[i]
        if ch == " ":
            i += 1
            continue
        if ch == "," and inputs:
            terms.append([])
            ell.append(False)
            i += 1
            continue
        if ch == ".":
            who = f"operand {len(terms) - 1}" if inputs else "output"
            if ell[-1]:
                raise RuntimeError(f"einsum(): found '.' for {who} for which an ellipsis was already found")
            if eq[i:i + 3] != "..." or i + 3 > stop:
                raise RuntimeError(f"einsum(): found '.' for {who} that is not part of any ellipsis")
            terms[-1].append("...")
            ell[-1] = True
            i += 3
            continue
        if ch not in string.ascii_letters:
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, subscripts "
                               "must be in [a-zA-Z]")
        terms[-1].append(ch)
        i += 1
    return terms, ell
