from skldp.channels import (
    OneBitCompressiveChannel,
    OneBitHadamardChannel,
    RecursiveCompressiveChannel,
    SymmetricCompressiveChannel,
)
from tests.channel_contract import ChannelContract, contract_fixture

EPS = (1e-3, 1.0, 50.0)
KS = (2, 3, 17)


def _small_channels():
    out = []
    for k in KS:
        for eps in EPS:
            out.append(OneBitCompressiveChannel(eps, k, 2 * k + 10, seed=k))
            out.append(SymmetricCompressiveChannel(eps, k, 2 * k + 16, seed=k))
            out.append(RecursiveCompressiveChannel(eps, k, k + 12, n_blocks=2, seed=k))
            out.append(OneBitHadamardChannel(eps, k, assignment="random"))
    out.append(RecursiveCompressiveChannel(1.0, 17, 30, n_blocks=1, seed=3))
    out.append(RecursiveCompressiveChannel(1.0, 17, 12, n_blocks=4, seed=3, assignment="random"))
    return out


SMALL = _small_channels()


channel = contract_fixture(SMALL)


class TestCompressiveContract(ChannelContract):
    pass
