from .module import Module
from .linear import Identity, Linear, Bilinear, Flatten, Unflatten
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .loss import *  # noqa: F401,F403
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .transformer import (MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .lazy import *  # noqa: F401,F403
from .adaptive import AdaptiveLogSoftmaxWithLoss
