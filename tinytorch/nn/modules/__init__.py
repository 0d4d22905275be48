from .module import Module
from .linear import Identity, Linear, Bilinear, LazyLinear
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, LazyConv1d, LazyConv2d,
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d)
from .flatten import Flatten, Unflatten
from .pooling import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .loss import *  # noqa: F401,F403
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .transformer import (MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .lazy import LazyModuleMixin
from .adaptive import AdaptiveLogSoftmaxWithLoss
# the star import of the former ``layers`` module also exported these (``nn.init`` comes from ``nn`` itself);
# kept so code that reached them here still runs
from ..._ops.creation import empty, ones, tensor, zeros  # noqa: F401,E402
from .. import init  # noqa: F401,E402
from ..parameter import Parameter  # noqa: F401,E402
