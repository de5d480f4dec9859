"""Synthetic data sets: twins of the real sources and the frames of the other experiments.

``GENERATORS`` maps a data set name (``DataRequest.dataset``) to its generator.
"""

from __future__ import annotations

from colbench.data.errors import DataError
from colbench.data.synth.base import Generator, OptionSpec, TextLayout
from colbench.data.synth.fanniemae import FannieMae2016Q4
from colbench.data.synth.int64_frame import Int64Frame
from colbench.data.synth.ipc_column import IpcColumn
from colbench.data.synth.nyctaxi2010 import NycTaxi2010
from colbench.data.synth.nyctaxi2016 import NycTaxi2016
from colbench.data.synth.vroom import VroomCharacter, VroomNumeric

GENERATORS: dict[str, Generator] = {
    g.name: g
    for g in (NycTaxi2010(), FannieMae2016Q4(), *(NycTaxi2016(m) for m in range(1, 7)), Int64Frame(),
              IpcColumn(), VroomNumeric(), VroomCharacter())
}


def get_generator(name: str) -> Generator:
    try:
        return GENERATORS[name]
    except KeyError:
        raise DataError(f"no synthetic generator for {name!r}; known: {', '.join(GENERATORS)}") from None


__all__ = ["GENERATORS", "DataError", "Generator", "OptionSpec", "TextLayout", "get_generator"]
