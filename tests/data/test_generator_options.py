"""Generator options are typed when read: a wrong value is a DataError that names the option."""

from __future__ import annotations

import pytest

from colbench.data.errors import DataError
from colbench.data.synth import GENERATORS
from colbench.data.synth.base import option_float, option_int, option_str


def test_typed_option_reads():
    options = {"columns": 3, "value_size": "8", "null_fraction": 0, "type": "int64"}
    assert option_int(options, "columns") == 3 and option_int(options, "value_size") == 8
    assert option_float(options, "null_fraction") == 0.0 and option_str(options, "type") == "int64"


@pytest.mark.parametrize(("read", "value", "says"), [
    (option_int, None, "must be an integer"), (option_int, True, "must be an integer"),
    (option_float, None, "must be a number"), (option_str, 3, "must be text"),
])
def test_a_wrong_option_names_itself(read, value, says):
    with pytest.raises(DataError, match=f"option opt={value!r} {says}"):
        read({"opt": value}, "opt")


def test_generators_fill_defaults_and_convert_kinds():
    ipc = GENERATORS["ipc_column"]
    assert ipc.options({"type": "int32", "columns": "2"}) == {"type": "int32", "value_size": 4, "columns": 2,
                                                              "null_fraction": 0.0}
    with pytest.raises(DataError, match="value_size >= 1"):
        ipc.options({"value_size": 0})
    vroom = GENERATORS["vroom_numeric"]
    assert vroom.layout(vroom.options({"columns": 2, "delimiter": "\t"})).delimiter == "\t"
    assert vroom.layout(vroom.options({"columns": 2})).column_names == ("X1", "X2")
