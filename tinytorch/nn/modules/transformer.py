"""Attention and Transformer layers: MultiheadAttention, TransformerEncoderLayer / TransformerEncoder,
TransformerDecoderLayer / TransformerDecoder and Transformer (Vaswani et al. 2017, "Attention Is All You Need";
``torch.nn.MultiheadAttention``, ``torch.nn.Transformer*``). Parameter names, shapes, initialisation and
state_dict keys are PyTorch's, so weights load both ways."""
import copy

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .container import ModuleList
from .dropout import Dropout
from .normalization import LayerNorm
from .linear import Linear, NonDynamicallyQuantizableLinear
from .module import Module


_float_mask = F._float_mask


class MultiheadAttention(Module):
    r"""Multi-head attention: ``out_proj(concat_h softmax(q_h k_h^T / sqrt(d) + mask) v_h)`` (Vaswani et al.
    2017, "Attention Is All You Need"): query, key and value are projected, split into ``num_heads`` heads of
    ``embed_dim // num_heads`` features, attended per head and joined by ``out_proj``.

    forward(query (L, N, E) or (N, L, E) with ``batch_first``, or unbatched (L, E); key/value (S, N, kdim/vdim)):
    returns (output like query, weights (N, L, S) averaged over heads or (N, H, L, S), or None when
    ``need_weights=False``). ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N*H, L, S): bool
    (True = not allowed to attend) or float (added to the scores).

    Args:
        embed_dim (int): E, the features of the query and of the output.
        num_heads (int): the number of heads; it must divide ``embed_dim``.
        dropout (float): dropout probability on the attention weights, in training.
        bias (bool): learn biases in the input and output projections.
        add_bias_kv (bool): append a learned bias position to key and value.
        add_zero_attn (bool): append a position of zeros to key and value.
        kdim (int, optional): the features of the key (default ``embed_dim``).
        vdim (int, optional): the features of the value (default ``embed_dim``).
        batch_first (bool): inputs and output are (N, L, E) instead of (L, N, E).
        device, dtype: where and as what the parameters are created.

    Shape:
        - Query: :math:`(L, N, E)`, :math:`(N, L, E)` with ``batch_first``, or :math:`(L, E)` unbatched.
        - Key: :math:`(S, N, \text{kdim})` (batch first likewise), or :math:`(S, \text{kdim})`.
        - Value: :math:`(S, N, \text{vdim})` (batch first likewise), or :math:`(S, \text{vdim})`.
        - Output: the attention output, shaped as Query, and the weights :math:`(N, L, S)` (or
          :math:`(N, H, L, S)` with ``average_attn_weights=False``), or None.

    Examples::

        >>> mha = nn.MultiheadAttention(16, 4, batch_first=True)
        >>> q, kv = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
        >>> out, weights = mha(q, kv, kv)
        >>> out.shape, weights.shape
        (torch.Size([2, 5, 16]), torch.Size([2, 5, 7]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        fk = dict(device=device, dtype=dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **fk))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **fk))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **fk))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **fk))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **fk))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **fk))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        if self.batch_first and query.ndim == 3:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and query.ndim == 3:
            out = out.transpose(0, 1)
        return out, weights


def _activation(activation):
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    r"""Self-attention + feed-forward block with residuals; post-norm, or pre-norm with ``norm_first``
    (the encoder layer of Vaswani et al. 2017, "Attention Is All You Need"; pre-norm: Xiong et al. 2020,
    "On Layer Normalization in the Transformer Architecture").
    forward(src (S, N, E) or (N, S, E) with ``batch_first``, src_mask, src_key_padding_mask) -> like src.

    Args:
        d_model (int): E, the features of each position.
        nhead (int): the number of attention heads; it must divide ``d_model``.
        dim_feedforward (int): the hidden size of the feed-forward network.
        dropout (float): dropout probability after attention, inside and after the feed-forward network.
        activation (str or callable): the feed-forward activation, ``'relu'``, ``'gelu'`` or a function.
        layer_norm_eps (float): the eps of the layer norms.
        batch_first (bool): inputs and outputs are (N, S, E) instead of (S, N, E).
        norm_first (bool): pre-norm (normalize before each block, inside the residual) instead of post-norm.
        bias (bool): learn biases in the linear layers and layer norms.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Src: :math:`(S, N, E)`, :math:`(N, S, E)` with ``batch_first``, or :math:`(S, E)` unbatched.
        - Src_mask: :math:`(S, S)` or :math:`(N \cdot \text{nhead}, S, S)`; src_key_padding_mask: :math:`(N, S)`.
        - Output: the shape of Src.

    Examples::

        >>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> layer(torch.randn(10, 2, 16)).shape
        torch.Size([10, 2, 16])
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        fk = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x, mask, kpm, is_causal):
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                                            is_causal=is_causal)[0])

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerDecoderLayer(Module):
    r"""Self-attention, attention over ``memory`` and feed-forward, with residuals and post- or pre-norm
    (the decoder layer of Vaswani et al. 2017).
    forward(tgt (T, N, E), memory (S, N, E), masks ...) -> like tgt.

    Args:
        d_model (int): E, the features of each position.
        nhead (int): the number of attention heads; it must divide ``d_model``.
        dim_feedforward (int): the hidden size of the feed-forward network.
        dropout (float): dropout probability after attention, inside and after the feed-forward network.
        activation (str or callable): the feed-forward activation, ``'relu'``, ``'gelu'`` or a function.
        layer_norm_eps (float): the eps of the layer norms.
        batch_first (bool): inputs and outputs are (N, S, E) instead of (S, N, E).
        norm_first (bool): pre-norm (normalize before each block, inside the residual) instead of post-norm.
        bias (bool): learn biases in the linear layers and layer norms.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Tgt: :math:`(T, N, E)`, :math:`(N, T, E)` with ``batch_first``, or :math:`(T, E)` unbatched.
        - Memory: :math:`(S, N, E)`, likewise.
        - Tgt_mask: :math:`(T, T)`; memory_mask: :math:`(T, S)`; the key padding masks :math:`(N, T)` and
          :math:`(N, S)`.
        - Output: the shape of Tgt.

    Examples::

        >>> layer = nn.TransformerDecoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True)
        >>> layer(torch.randn(2, 6, 16), torch.randn(2, 10, 16)).shape
        torch.Size([2, 6, 16])
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        fk = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **fk)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x, mask, kpm, is_causal):
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                                            is_causal=is_causal)[0])

    def _mha_block(self, x, mem, mask, kpm, is_causal):
        return self.dropout2(self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=kpm,
                                                 need_weights=False, is_causal=is_causal)[0])

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x))


class TransformerEncoder(Module):
    r"""``num_layers`` deep copies of ``encoder_layer`` applied in turn, then the optional ``norm``.

    Args:
        encoder_layer (TransformerEncoderLayer): the layer copied.
        num_layers (int): how many copies.
        norm (Module, optional): applied to the output of the last layer.
        enable_nested_tensor (bool): torch's padding-skipping fast path (kept; the result is the same).
        mask_check (bool): check the masks of that fast path (kept).

    Shape:
        - Src: :math:`(S, N, E)`, :math:`(N, S, E)` with ``batch_first``, or :math:`(S, E)` unbatched.
        - Output: the shape of Src.

    Examples::

        >>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        >>> encoder(torch.randn(10, 2, 16)).shape
        torch.Size([10, 2, 16])
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    r"""``num_layers`` deep copies of ``decoder_layer`` applied in turn, then the optional ``norm``.

    Args:
        decoder_layer (TransformerDecoderLayer): the layer copied.
        num_layers (int): how many copies.
        norm (Module, optional): applied to the output of the last layer.

    Shape:
        - Tgt: :math:`(T, N, E)`, :math:`(N, T, E)` with ``batch_first``, or :math:`(T, E)` unbatched.
        - Memory: :math:`(S, N, E)`, likewise.
        - Output: the shape of Tgt.

    Examples::

        >>> layer = nn.TransformerDecoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> decoder = nn.TransformerDecoder(layer, num_layers=2)
        >>> decoder(torch.randn(6, 2, 16), torch.randn(10, 2, 16)).shape
        torch.Size([6, 2, 16])
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    r"""Encoder-decoder Transformer: ``decoder(tgt, encoder(src))``; weights (dim > 1) Xavier-uniform initialised
    (Vaswani et al. 2017, "Attention Is All You Need").
    forward(src (S, N, E), tgt (T, N, E), masks ...) -> (T, N, E) (batch first with ``batch_first``).

    Args:
        d_model (int): E, the features of each position.
        nhead (int): the number of attention heads.
        num_encoder_layers (int): the depth of the encoder.
        num_decoder_layers (int): the depth of the decoder.
        dim_feedforward (int): the hidden size of the feed-forward networks.
        dropout (float): the dropout probability.
        activation (str or callable): the feed-forward activation.
        custom_encoder (Module, optional): used instead of the built encoder.
        custom_decoder (Module, optional): used instead of the built decoder.
        layer_norm_eps (float): the eps of the layer norms.
        batch_first (bool): inputs and output are (N, S, E) instead of (S, N, E).
        norm_first (bool): pre-norm layers.
        bias (bool): learn biases in the linear layers and layer norms.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Src: :math:`(S, N, E)`, :math:`(N, S, E)` with ``batch_first``, or :math:`(S, E)` unbatched.
        - Tgt: :math:`(T, N, E)`, likewise.
        - Src_mask :math:`(S, S)`, tgt_mask :math:`(T, T)`, memory_mask :math:`(T, S)`; key padding masks
          :math:`(N, S)` / :math:`(N, T)`.
        - Output: :math:`(T, N, E)` (batch first with ``batch_first``).

    Examples::

        >>> model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
        ...                        dim_feedforward=32)
        >>> src, tgt = torch.randn(10, 2, 16), torch.randn(6, 2, 16)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(6)
        >>> model(src, tgt, tgt_mask=mask).shape
        torch.Size([6, 2, 16])
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        fk = dict(device=device, dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, **fk)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, **fk)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        if src._shape[-1] != self.d_model or tgt._shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """An (sz, sz) float mask: -inf above the diagonal, 0 elsewhere."""
        from ..._ops.creation import full
        return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)
