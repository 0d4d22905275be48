"""Recurrent layers: RNN, LSTM, GRU and their single-step cells (PyTorch's ``torch.nn.modules.rnn``).

Parameter names, shapes, gate order (LSTM: i, f, g, o; GRU: r, z, n) and initialisation (uniform in
+-1/sqrt(hidden_size)) follow PyTorch, so a ``state_dict`` moves between the two. The time loop is written
in tinytorch ops, so autograd, every device and double backward come for free.
Sources: Hochreiter & Schmidhuber 1997 (LSTM); Cho et al. 2014 (GRU); the PyTorch docs for the exact equations.
"""
import math

from ...amp.autocast_mode import autocast_op
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from ..._ops.creation import empty, zeros
from ..._ops.shape import stack, cat


def _rnn_cell(x, h, w_ih, w_hh, b_ih, b_hh, nonlinearity):
    pre = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def _lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    gi = F.linear(x, w_ih, b_ih)
    gh = F.linear(h, w_hh, b_hh)
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return (1 - z) * n + z * h


def _reset_uniform(m):
    """PyTorch's init for recurrent weights and biases: U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    k = 1.0 / math.sqrt(m.hidden_size) if m.hidden_size > 0 else 0
    for p in m.parameters():
        init.uniform_(p, -k, k)


def _no_proj_size(kwargs):
    """PyTorch's RNN and GRU take ``**kwargs`` only to refuse ``proj_size`` with a ValueError; any other
    unknown keyword is a TypeError, as a misspelt argument."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


class RNNBase(Module):
    r"""Shared bookkeeping of RNN / LSTM / GRU: parameters ``weight_ih_l{k}[_reverse]`` etc., shapes, the
    initialisation (uniform in +-1/sqrt(hidden_size)) and the time loop over layers and directions.

    Args:
        mode (str): ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.
        input_size (int): H_in, the features of each input step.
        hidden_size (int): H, the features of the hidden state.
        num_layers (int): stacked layers, each taking the outputs of the one below.
        bias (bool): learn the biases ``b_ih`` and ``b_hh``.
        batch_first (bool): input and output are (N, L, *) instead of (L, N, *) (the hidden states are not).
        dropout (float): dropout probability on the outputs of every layer but the last, in training.
        bidirectional (bool): also run each layer backwards in time and concatenate the two directions (D = 2).
        proj_size (int): LSTM only: project each hidden state to this size (0: none).
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(L, N, H_{in})`, :math:`(N, L, H_{in})` with ``batch_first``, :math:`(L, H_{in})` unbatched,
          or a ``PackedSequence``.
        - Hx: :math:`(D \cdot \text{num\_layers}, N, H)` or :math:`(D \cdot \text{num\_layers}, H)`; zeros when
          omitted.
        - Output: :math:`(L, N, D \cdot H)` (batch first with ``batch_first``), and the last hidden state, shaped as
          Hx.

    Examples::

        >>> m = nn.RNNBase("RNN_TANH", 4, 8)
        >>> [(name, tuple(p.shape)) for name, p in m.named_parameters()]
        [('weight_ih_l0', (8, 4)), ('weight_hh_l0', (8, 8)), ('bias_ih_l0', (8,)), ('bias_hh_l0', (8,))]
    """

    _gates = 1

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError("hidden_size and num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        ndir = 2 if bidirectional else 1
        g = self._gates * hidden_size
        out_size = proj_size or hidden_size  # an LSTM with projections outputs h of size proj_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(ndir):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else out_size * ndir
                names = [("weight_ih", (g, in_size)), ("weight_hh", (g, out_size))]
                if bias:
                    names += [("bias_ih", (g,)), ("bias_hh", (g,))]
                if proj_size:
                    names.append(("weight_hr", (proj_size, hidden_size)))
                for n, shape in names:
                    setattr(self, n + suffix, Parameter(empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(n + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_uniform(self)

    def flatten_parameters(self):
        """Re-pack the weights into one contiguous buffer for cuDNN in PyTorch; a no-op there off cuDNN, and
        here, where each weight is its own tensor and no fused kernel needs them packed."""
        return None

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def _weights(self, layer, d):
        suffix = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda n: getattr(self, n + suffix, None)  # noqa: E731
        w = (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"))
        return w + (get("weight_hr"),) if self.proj_size else w

    def _step(self, x, state, w):
        raise NotImplementedError

    def forward(self, input, hx=None):
        """input (L, N, H_in) ((N, L, H_in) with batch_first, or unbatched (L, H_in)) -> (output, h_n) for RNN/GRU,
        (output, (h_n, c_n)) for LSTM. output is (L, N, D * hidden_size); h_n is (D * num_layers, N, hidden)."""
        from ..utils.rnn import PackedSequence
        packed = isinstance(input, PackedSequence)
        is_lstm = self.mode == "LSTM"
        if packed:
            # the padded (T, N, H_in) batch in the packed (sorted) order: step t updates only its first
            # batch_sizes[t] rows, so a finished sequence keeps its last state and padding is never read
            bsizes = [int(b) for b in input.batch_sizes.tolist()]
            data, n_max, off, rows = input.data, bsizes[0], 0, []
            for b in bsizes:
                rows.append(data[off:off + b] if b == n_max else F.pad(data[off:off + b], (0, 0, 0, n_max - b)))
                off += b
            x = stack(rows)
            batched = True
            if hx is not None and input.sorted_indices is not None:
                hx = tuple(h.index_select(1, input.sorted_indices) for h in hx) if is_lstm else \
                    hx.index_select(1, input.sorted_indices)
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{self.mode}: Expected input to be 2D or 3D, got {input.ndim}D instead")
            batched = input.ndim == 3
            x = input if batched else input.unsqueeze(1)
            if batched and self.batch_first:
                x = x.transpose(0, 1)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {x.shape[-1]}")
        L, N = x.shape[0], x.shape[1]
        ndir = 2 if self.bidirectional else 1
        hsize = self.proj_size or self.hidden_size
        if hx is None:
            h0 = zeros(self.num_layers * ndir, N, hsize, dtype=x.dtype, device=x.device)
            hx = (h0, zeros(self.num_layers * ndir, N, self.hidden_size, dtype=x.dtype, device=x.device)) \
                if is_lstm else h0
        elif not batched:
            hx = tuple(h.unsqueeze(1) for h in hx) if is_lstm else hx.unsqueeze(1)
        if is_lstm:
            for k, (h, size) in enumerate(zip(hx, (hsize, self.hidden_size))):
                expect = (self.num_layers * ndir, N, size)
                if tuple(h.shape) != expect:
                    raise RuntimeError(f"Expected hidden[{k}] size {expect}, got {list(h.shape)}")
        elif tuple(hx.shape) != (self.num_layers * ndir, N, self.hidden_size):
            raise RuntimeError(f"Expected hidden size {(self.num_layers * ndir, N, self.hidden_size)}, got "
                               f"{list(hx.shape)}")
        h_n, c_n = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(ndir):
                w = self._weights(layer, d)
                i = layer * ndir + d
                state = (hx[0][i], hx[1][i]) if is_lstm else hx[i]
                seq = [None] * L
                steps = range(L - 1, -1, -1) if d else range(L)
                for t in steps:
                    b = bsizes[t] if packed else N
                    if b == N:
                        state = self._step(layer_in[t], state, w)
                    elif is_lstm:
                        h_b, c_b = self._step(layer_in[t][:b], (state[0][:b], state[1][:b]), w)
                        state = (cat([h_b, state[0][b:]]), cat([c_b, state[1][b:]]))
                    else:
                        state = cat([self._step(layer_in[t][:b], state[:b], w), state[b:]])
                    seq[t] = state[0] if is_lstm else state
                outs.append(stack(seq) if L else zeros(0, N, hsize, dtype=x.dtype, device=x.device))
                h_n.append(state[0] if is_lstm else state)
                if is_lstm:
                    c_n.append(state[1])
            layer_in = outs[0] if ndir == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        out = layer_in
        if packed:
            out = PackedSequence(cat([out[t, :b] for t, b in enumerate(bsizes)]), input.batch_sizes,
                                 input.sorted_indices, input.unsorted_indices)
            hn = stack(h_n)
            if input.unsorted_indices is not None:
                hn = hn.index_select(1, input.unsorted_indices)
                c_n = [stack(c_n).index_select(1, input.unsorted_indices)] if is_lstm else c_n
            if is_lstm:
                return out, (hn, c_n[0] if input.unsorted_indices is not None else stack(c_n))
            return out, hn
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        hn = stack(h_n)
        if not batched:
            out, hn = out.squeeze(1), hn.squeeze(1)
        if is_lstm:
            cn = stack(c_n)
            return out, (hn, cn if batched else cn.squeeze(1))
        return out, hn


class RNN(RNNBase):
    r"""Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu), as ``torch.nn.RNN``
    (Elman 1990, "Finding Structure in Time").

    Args:
        input_size (int): H_in, the features of each input step.
        hidden_size (int): H, the features of the hidden state.
        num_layers (int): stacked layers, each taking the outputs of the one below.
        bias (bool): learn the biases ``b_ih`` and ``b_hh``.
        batch_first (bool): input and output are (N, L, *) instead of (L, N, *) (the hidden states are not).
        dropout (float): dropout probability on the outputs of every layer but the last, in training.
        bidirectional (bool): also run each layer backwards in time and concatenate the two directions (D = 2).
        nonlinearity (str): ``'tanh'`` or ``'relu'``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(L, N, H_{in})`, :math:`(N, L, H_{in})` with ``batch_first``, :math:`(L, H_{in})` unbatched,
          or a ``PackedSequence``.
        - Hx: :math:`(D \cdot \text{num\_layers}, N, H)` or :math:`(D \cdot \text{num\_layers}, H)`; zeros when
          omitted.
        - Output: :math:`(L, N, D \cdot H)` (batch first with ``batch_first``), and the last hidden state, shaped as
          Hx.

    Examples::

        >>> rnn = nn.RNN(10, 20, num_layers=2)
        >>> output, h_n = rnn(torch.randn(5, 3, 10), torch.zeros(2, 3, 20))
        >>> output.shape, h_n.shape
        (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj_size(kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def _step(self, x, h, w):
        return _rnn_cell(x, h, *w, self.nonlinearity)


class LSTM(RNNBase):
    r"""Long short-term memory, as ``torch.nn.LSTM`` (gates i, f, g, o): per step
    ``c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)`` and ``h_t = sigmoid(o) * tanh(c_t)``, the gates being
    linear in ``x_t`` and ``h_{t-1}`` (Hochreiter & Schmidhuber 1997, "Long Short-Term Memory"; the projection
    ``proj_size`` is from Sak et al. 2014, "Long Short-Term Memory Based Recurrent Neural Network Architectures for
    Large Vocabulary Speech Recognition").

    Args:
        input_size (int): H_in, the features of each input step.
        hidden_size (int): H, the features of the hidden state.
        num_layers (int): stacked layers, each taking the outputs of the one below.
        bias (bool): learn the biases ``b_ih`` and ``b_hh``.
        batch_first (bool): input and output are (N, L, *) instead of (L, N, *) (the hidden states are not).
        dropout (float): dropout probability on the outputs of every layer but the last, in training.
        bidirectional (bool): also run each layer backwards in time and concatenate the two directions (D = 2).
        proj_size (int): project each hidden state to this size with ``weight_hr`` (0: none).
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(L, N, H_{in})`, :math:`(N, L, H_{in})` with ``batch_first``, :math:`(L, H_{in})` unbatched,
          or a ``PackedSequence``.
        - Hx: a pair ``(h_0, c_0)``, :math:`(D \cdot \text{num\_layers}, N, H_{out})` and
          :math:`(D \cdot \text{num\_layers}, N, H)`; zeros when omitted. :math:`H_{out}` is ``proj_size`` or H.
        - Output: :math:`(L, N, D \cdot H_{out})` (batch first with ``batch_first``), and ``(h_n, c_n)`` shaped as
          Hx.

    Examples::

        >>> lstm = nn.LSTM(10, 20, batch_first=True, bidirectional=True)
        >>> output, (h_n, c_n) = lstm(torch.randn(3, 5, 10))
        >>> output.shape, h_n.shape, c_n.shape
        (torch.Size([3, 5, 40]), torch.Size([2, 3, 20]), torch.Size([2, 3, 20]))
    """

    _gates = 4

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def _step(self, x, state, w):
        return _lstm_cell(x, state[0], state[1], *w)

    @autocast_op("lower")  # PyTorch's CPU LSTM is one lower-precision op (mkldnn_rnn_layer) under autocast
    def forward(self, input, hx=None):
        return RNNBase.forward(self, input, hx)


class GRU(RNNBase):
    r"""Gated recurrent unit, as ``torch.nn.GRU`` (gates r, z, n): per step
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h_t = (1 - z) * n + z * h_{t-1}``, r and z sigmoid gates
    (Cho et al. 2014, "Learning Phrase Representations using RNN Encoder-Decoder for Statistical Machine
    Translation").

    Args:
        input_size (int): H_in, the features of each input step.
        hidden_size (int): H, the features of the hidden state.
        num_layers (int): stacked layers, each taking the outputs of the one below.
        bias (bool): learn the biases ``b_ih`` and ``b_hh``.
        batch_first (bool): input and output are (N, L, *) instead of (L, N, *) (the hidden states are not).
        dropout (float): dropout probability on the outputs of every layer but the last, in training.
        bidirectional (bool): also run each layer backwards in time and concatenate the two directions (D = 2).
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(L, N, H_{in})`, :math:`(N, L, H_{in})` with ``batch_first``, :math:`(L, H_{in})` unbatched,
          or a ``PackedSequence``.
        - Hx: :math:`(D \cdot \text{num\_layers}, N, H)` or :math:`(D \cdot \text{num\_layers}, H)`; zeros when
          omitted.
        - Output: :math:`(L, N, D \cdot H)` (batch first with ``batch_first``), and the last hidden state, shaped as
          Hx.

    Examples::

        >>> gru = nn.GRU(10, 20, num_layers=2)
        >>> output, h_n = gru(torch.randn(5, 3, 10))
        >>> output.shape, h_n.shape
        (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]))
    """

    _gates = 3

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj_size(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def _step(self, x, h, w):
        return _gru_cell(x, h, *w)


class RNNCellBase(Module):
    r"""Parameters of one recurrent cell: ``weight_ih`` (num_chunks * hidden_size, input_size), ``weight_hh``
    (num_chunks * hidden_size, hidden_size) and the two biases, ``num_chunks`` being the number of gates
    (1 RNN, 3 GRU, 4 LSTM), as ``torch.nn.RNNCellBase``.

    Args:
        input_size (int): the features of the input.
        hidden_size (int): the features of the hidden state.
        bias (bool): learn the biases.
        num_chunks (int): the number of gates.
        device, dtype: where and as what the parameters are created.

    Examples::

        >>> cell = nn.RNNCellBase(4, 8, True, 3)
        >>> cell.weight_ih.shape, cell.weight_hh.shape
        (torch.Size([24, 4]), torch.Size([24, 8]))
    """

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(empty((g, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(empty((g, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty((g,), device=device, dtype=dtype))
            self.bias_hh = Parameter(empty((g,), device=device, dtype=dtype))
        else:
            self.bias_ih = self.bias_hh = None
        self.reset_parameters()

    def reset_parameters(self):
        _reset_uniform(self)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}" + ("" if self.bias is True else f", bias={self.bias}")
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _zeros(self, x):
        shape = (x.shape[0], self.hidden_size) if x.ndim == 2 else (self.hidden_size,)
        return zeros(shape, dtype=x.dtype, device=x.device)

    def _w(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def _check_ranks(self, input, hx, hx_name="hidden"):
        """ValueError (PyTorch's wording) unless ``input`` and each hidden state are 1-D or 2-D."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = [] if hx is None else ([(hx_name, hx)] if hx_name == "hidden" else
                                        [(f"hx[{i}]", h) for i, h in enumerate(hx)])
        for label, h in states:
            if h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.dim()}D instead")


class RNNCell(RNNCellBase):
    r"""One step of :class:`RNN`: input (N, H_in) or (H_in,), hx (N, H) -> h' (N, H):
    ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    Args:
        input_size (int): H_in, the features of the input.
        hidden_size (int): H, the features of the hidden state.
        bias (bool): learn the biases ``b_ih`` and ``b_hh``.
        nonlinearity (str): ``'tanh'`` or ``'relu'``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, H_{in})` or :math:`(H_{in})`.
        - Hx: :math:`(N, H)` or :math:`(H)`; zeros when omitted.
        - Output: :math:`(N, H)` or :math:`(H)`.

    Examples::

        >>> cell = nn.RNNCell(10, 20)
        >>> h = torch.zeros(3, 20)
        >>> for x in torch.randn(6, 3, 10):
        ...     h = cell(x, h)
        >>> h.shape
        torch.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """h' for ``input`` and ``hx``; ValueError for inputs that are not 1-D or 2-D, RuntimeError for a
        nonlinearity other than 'tanh' / 'relu' (checked here, as PyTorch, not in the constructor)."""
        self._check_ranks(input, hx)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return _rnn_cell(input, self._zeros(input) if hx is None else hx, *self._w(), self.nonlinearity)


class LSTMCell(RNNCellBase):
    r"""One step of :class:`LSTM`: (input, (h, c)) -> (h', c').

    Args:
        input_size (int): H_in, the features of the input.
        hidden_size (int): H, the features of the hidden state.
        bias (bool): learn the biases ``b_ih`` and ``b_hh``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, H_{in})` or :math:`(H_{in})`.
        - Hx: a pair ``(h, c)``, each :math:`(N, H)` or :math:`(H)`; zeros when omitted.
        - Output: the pair ``(h', c')``, shaped as Hx.

    Examples::

        >>> cell = nn.LSTMCell(10, 20)
        >>> h, c = cell(torch.randn(3, 10))
        >>> h.shape, c.shape
        (torch.Size([3, 20]), torch.Size([3, 20]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """(h', c') for ``input`` and ``hx = (h, c)``; ValueError for inputs or states not 1-D or 2-D."""
        self._check_ranks(input, hx, "hx")
        h, c = (self._zeros(input), self._zeros(input)) if hx is None else hx
        return _lstm_cell(input, h, c, *self._w())


class GRUCell(RNNCellBase):
    r"""One step of :class:`GRU`: (input, h) -> h'.

    Args:
        input_size (int): H_in, the features of the input.
        hidden_size (int): H, the features of the hidden state.
        bias (bool): learn the biases ``b_ih`` and ``b_hh``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, H_{in})` or :math:`(H_{in})`.
        - Hx: :math:`(N, H)` or :math:`(H)`; zeros when omitted.
        - Output: :math:`(N, H)` or :math:`(H)`.

    Examples::

        >>> cell = nn.GRUCell(10, 20)
        >>> cell(torch.randn(3, 10), torch.zeros(3, 20)).shape
        torch.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """h' for ``input`` and ``hx``; ValueError for inputs that are not 1-D or 2-D."""
        self._check_ranks(input, hx)
        return _gru_cell(input, self._zeros(input) if hx is None else hx, *self._w())
