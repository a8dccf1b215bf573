"""The export's tensors in perf_analyzer's --input-data forms, read back by the checker's own reader
(app/checker/engine/input_data.py). Pure; the export of a broken zoo model's check is in test_sequence_checks.py."""
from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
from tritonclient.utils import triton_to_np_dtype

from app.checker.engine import TensorSpec, input_data
from app.checker.engine.reports import export
from tests.checker.tables import facts

TYPES = ("BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP32", "FP64", "BYTES")


def sample(datatype: str, shape=(3,)) -> np.ndarray:
    if datatype == "BYTES":
        return np.array([b"ab", "日本".encode(), b"z"], dtype=object).reshape(shape)
    if datatype == "BOOL":
        return np.array([True, False, True]).reshape(shape)
    dtype = triton_to_np_dtype(datatype)
    if datatype.startswith(("FP", "BF")):
        return np.array([0.5, -1.25, 3.0], dtype=dtype).reshape(shape)
    return np.array([1, 2, 3] if datatype.startswith("U") else [1, -2, 3], dtype=dtype).reshape(shape)


def model(specs) -> object:
    """A model without a batch dimension taking `specs`."""
    return dataclasses.replace(facts(), inputs=tuple(specs), max_batch_size=0)


def read_back(specs, values: dict) -> dict:
    document = json.loads(json.dumps({"data": [[{s.name: export.tensor(values[s.name], s) for s in specs}]]}))
    dims = {s.name: None if s.variable else s.dims for s in specs}
    return input_data.sequences(document, model(specs), dims)[0][0]


def test_every_datatype_round_trips_in_the_form_perf_analyzer_reads():
    specs = [TensorSpec(t, t, (3,)) for t in TYPES]
    values = {s.name: sample(s.datatype) for s in specs}
    forms = {s.name: export.tensor(values[s.name], s) for s in specs}
    assert forms["BOOL"] == [True, False, True]  # JSON booleans: perf_analyzer's reader takes nothing else
    assert forms["INT8"] == [1, -2, 3] and forms["UINT64"] == [1, 2, 3]
    assert forms["FP32"] == [0.5, -1.25, 3.0] and all(isinstance(v, float) for v in forms["FP64"])  # doubles, with a fraction
    assert set(forms["FP16"]) == {"b64"} and set(forms["BF16"]) == {"b64"}  # no explicit lists for FP16 and BF16
    assert forms["BYTES"] == ["ab", "日本", "z"]
    back = read_back(specs, values)
    for s in specs:
        assert back[s.name].dtype == values[s.name].dtype or s.datatype == "BYTES", s.datatype
        np.testing.assert_array_equal(back[s.name], values[s.name], err_msg=s.datatype)


def test_what_a_json_list_cannot_carry_goes_as_little_endian_base64():
    nan = TensorSpec("N", "FP32", (2,))
    raw = TensorSpec("S", "BYTES", (2,))
    values = {"N": np.array([np.nan, np.inf], dtype=np.float32), "S": np.array([b"\xff\xfe", b"a\x00b"], dtype=object)}
    assert set(export.tensor(values["N"], nan)) == {"b64"}  # JSON has no NaN or infinity
    assert set(export.tensor(values["S"], raw)) == {"b64"}  # not UTF-8; a NUL would end perf_analyzer's C string
    back = read_back([nan, raw], values)
    assert np.isnan(back["N"][0]) and np.isinf(back["N"][1])
    assert list(back["S"]) == [b"\xff\xfe", b"a\x00b"]


def test_variable_dimensions_are_written_with_content_and_shape():
    spec = TensorSpec("V", "INT32", (-1, 2))
    value = np.arange(6, dtype=np.int32).reshape(3, 2)
    assert export.tensor(value, spec) == {"content": [0, 1, 2, 3, 4, 5], "shape": [3, 2]}
    np.testing.assert_array_equal(read_back([spec], {"V": value})["V"], value)
    half = TensorSpec("H", "FP16", (-1,))
    written = export.tensor(np.array([1.5], dtype=np.float16), half)
    assert set(written) == {"content", "shape"} and set(written["content"]) == {"b64"} and written["shape"] == [1]


def _result(broken_steps: pd.DataFrame, references: dict, lengths: list[int], batched: bool = True):
    """What input_data() reads of a check's result."""
    f = facts()
    source = SimpleNamespace(arrays=lambda s, k: {"INPUT": np.array([[s, k]], dtype=np.int32) if batched else np.array([s, k], dtype=np.int32)})
    tables = SimpleNamespace(references=references, lengths=lengths)
    return SimpleNamespace(facts=f, tables=tables, source=source, judgement=SimpleNamespace(broken_steps=broken_steps))


def test_one_stream_per_failing_session_with_its_references_aligned_step_for_step():
    columns = ["check", "variant", "conversation", "session", "step", "role", "output", "difference", "tolerance", "t_send"]
    wrong = pd.DataFrame([["interleaved", "all_instances", 10, 1, 1, "interleaved", "OUTPUT", 4.0, 0.0, 1.0],
                          ["interleaved", "all_instances", 10, 1, 0, "interleaved", "OUTPUT", 0.0, 0.0, 0.5],
                          ["id_reuse", "all_instances", 12, 0, 2, "reuse", "OUTPUT", 0.0, 0.0, 2.0]], columns=columns)
    references = {(s, k): {"OUTPUT": np.array([[10 * s + k]], dtype=np.int64)} for s in range(3) for k in range(3)}
    result = _result(wrong, references, [3, 3, 3])
    assert export.failing_sessions(result) == [1]  # session 0 only appears with steps within tolerance
    document = export.input_data(result)
    assert document == {"data": [[{"INPUT": [1, 0]}, {"INPUT": [1, 1]}, {"INPUT": [1, 2]}]],
                        "validation_data": [[{"OUTPUT": [10]}, {"OUTPUT": [11]}, {"OUTPUT": [12]}]]}
    del references[(1, 2)]  # a reference step missing: the stream stops before it, validation_data with it
    assert [len(s) for s in export.input_data(result)["data"]] == [2]
    assert [len(s) for s in export.input_data(result)["validation_data"]] == [2]
    assert export.input_data(_result(wrong.iloc[1:], references, [3, 3, 3])) is None  # nothing beyond tolerance
    assert export.input_data(_result(wrong.iloc[0:0], references, [3, 3, 3])) is None
