"""Inputs from metadata and from perf_analyzer's data files, and how replies compare (pure)."""
from __future__ import annotations

import base64
import struct

import ml_dtypes
import numpy as np
import pytest

from app.checker.engine import CheckOptions, ModelFacts, TensorSpec, compare, input_data, inputs
from app.checker.engine.review import Expectations
from app.checker.words import error
from app.i18n import words
from app.lab.problems import LabError
from tests.checker.tables import facts

TYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP32", "FP64", "BYTES"]
NUMPY = {"BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.uint64, "INT8": np.int8,
         "INT16": np.int16, "INT32": np.int32, "INT64": np.int64, "FP16": np.float16, "BF16": ml_dtypes.bfloat16,
         "FP32": np.float32, "FP64": np.float64, "BYTES": np.object_}


def english(err: LabError) -> str:
    """A problem as the CLI words it in English (str() of a LabError is its codes)."""
    return error(err, words("en"))


def model(*specs: TensorSpec, max_batch: int = 4) -> ModelFacts:
    base = facts()
    return ModelFacts(**{**base.__dict__, "inputs": specs, "max_batch_size": max_batch})


@pytest.mark.parametrize("datatype", TYPES)
def test_every_datatype_is_generated_with_its_dtype_and_shape(datatype):
    spec = TensorSpec("X", datatype, (2, 3))
    array = inputs.generate(spec, (2, 3), np.random.default_rng(1))
    assert array.shape == (2, 3) and array.dtype == np.dtype(NUMPY[datatype])
    if datatype == "BYTES":
        assert all(isinstance(v, bytes) and 1 <= len(v) <= 8 for v in array.reshape(-1))


def test_each_session_and_step_has_its_own_inputs_the_same_in_every_run():
    f = model(TensorSpec("A", "INT32", (4,)), TensorSpec("B", "FP32", (2,)))
    source = inputs.Generated(f, {"A": (4,), "B": (2,)}, lengths=[3, 3], seed=5)
    again = inputs.Generated(f, {"A": (4,), "B": (2,)}, lengths=[3, 3], seed=5)
    first = source.arrays(0, 0)
    assert first["A"].shape == (1, 4)  # the batch dimension of a batch-1 request
    assert np.array_equal(first["A"], again.arrays(0, 0)["A"])
    histories = {tuple(np.concatenate([source.arrays(s, k)["A"].reshape(-1) for k in range(3)])) for s in range(2)}
    assert len(histories) == 2
    assert not np.array_equal(first["A"], inputs.Generated(f, {"A": (4,), "B": (2,)}, [3, 3], seed=6).arrays(0, 0)["A"])


def test_a_model_without_batching_gets_no_batch_dimension():
    f = model(TensorSpec("A", "INT32", (1,)), max_batch=0)
    assert inputs.Generated(f, {"A": (1,)}, [1]).arrays(0, 0)["A"].shape == (1,)


def test_shapes_fill_variable_dimensions_and_every_problem_names_the_input():
    f = model(TensorSpec("TOKENS", "INT64", (-1,)), TensorSpec("IMAGE", "FP32", (3, -1, -1)))
    assert inputs.concrete_shapes(f, {"TOKENS": (7,), "IMAGE": (3, 4, 5)}) == {"TOKENS": (7,), "IMAGE": (3, 4, 5)}
    assert inputs.concrete_shapes(f, {"TOKENS": (7,)}) == {"TOKENS": (7,), "IMAGE": None}  # the data file or the drawn sizes say
    with pytest.raises(LabError) as wrong:
        inputs.concrete_shapes(f, {"TOKENS": (7,), "IMAGE": (4, 4, 5), "OTHER": (1,)})
    assert {p.code for p in wrong.value.problems} == {"check_shape_unknown_input", "check_shape_mismatch"}
    assert "'OTHER', which is not an input of the model" in english(wrong.value)
    with pytest.raises(LabError) as large:
        inputs.concrete_shapes(f, {"TOKENS": (2**21,)})
    assert large.value.code == "check_shape_too_large" and "more than 1,048,576 elements per request" in english(large.value)


# -- sizes for the variable dimensions no --shape sizes ---------------------------------------------
def stateless(*specs: TensorSpec, config: dict | None = None, scheduler: str = "dynamic") -> ModelFacts:
    base = model(*specs)
    return ModelFacts(**{**base.__dict__, "scheduler": scheduler, "slots_per_instance": 0, "idle_timeout_us": 0, "controls": (),
                         "config": config or {}})


def sent_shapes(source, name: str) -> list[tuple[int, ...]]:
    """The shape of `name` in every request the sessions send (without the batch dimension)."""
    return [source.arrays(s, k)[name].shape[1:] for s, n in enumerate(source.lengths) for k in range(n)]


def drawn_source(f: ModelFacts, seed: int = 0, sessions: int = 16, steps: int = 24, shapes=None) -> inputs.Generated:
    dims = inputs.concrete_shapes(f, shapes or {})
    lengths = inputs.session_lengths(sessions, steps, seed, mixed=f.sequence)
    return inputs.Generated(f, dims, lengths, seed, inputs.drawn_sizes(f, dims, seed))


VARLEN = model(TensorSpec("TOKENS", "INT64", (-1,)), TensorSpec("MASK", "BOOL", (-1,)), TensorSpec("IMAGE", "FP32", (3, -1, -1)),
               TensorSpec("SCALE", "FP32", (1,)))


def test_a_sequence_models_sizes_are_drawn_per_session_and_step_within_the_default_range():
    source = drawn_source(VARLEN)
    assert source.sizes == inputs.DrawnSizes(1, 16, "request", 0) and inputs.DEFAULT_SIZES == (1, 16)
    tokens = [shape[0] for shape in sent_shapes(source, "TOKENS")]
    assert min(tokens) >= 1 and max(tokens) <= 16 and len(set(tokens)) > 8  # varied, inside the range
    per_session = [tuple(source.arrays(s, k)["TOKENS"].shape[1] for k in range(source.lengths[s])) for s in range(source.sessions)]
    assert len(set(per_session)) == source.sessions  # every session its own history of lengths
    for s, k in [(0, 0), (3, 5), (15, 7)]:  # one size per request: inputs whose lengths must agree agree
        arrays = source.arrays(s, k)
        n = arrays["TOKENS"].shape[1]
        assert arrays["MASK"].shape == (1, n) and arrays["IMAGE"].shape == (1, 3, n, n) and arrays["SCALE"].shape == (1, 1)


def test_drawn_sizes_are_the_same_in_every_run_with_the_same_seed_and_differ_with_another():
    first, again, other = drawn_source(VARLEN, seed=5), drawn_source(VARLEN, seed=5), drawn_source(VARLEN, seed=6)
    assert sent_shapes(first, "IMAGE") == sent_shapes(again, "IMAGE") != sent_shapes(other, "IMAGE")
    assert np.array_equal(first.arrays(2, 3)["TOKENS"], again.arrays(2, 3)["TOKENS"])


def test_a_dynamic_batcher_gets_one_size_for_every_request_so_any_requests_can_share_a_batch():
    f = stateless(TensorSpec("TOKENS", "INT64", (-1,)), TensorSpec("MASK", "BOOL", (-1,)))
    source = drawn_source(f, seed=3)
    assert source.sizes.per == "run"
    assert len(set(sent_shapes(source, "TOKENS"))) == 1 and set(sent_shapes(source, "TOKENS")) == set(sent_shapes(source, "MASK"))
    assert len({drawn_source(f, seed=s).sizes.size(0, 0) for s in range(20)}) > 1  # drawn, not a constant


@pytest.mark.parametrize(("f", "per"), [
    # every variable input allows ragged batches: Triton checks no shape, so each request has its own
    (stateless(TensorSpec("TOKENS", "INT64", (-1,)), config={"input": [{"name": "TOKENS", "allow_ragged_batch": True}]}), "request"),
    # one ragged input is not enough: the other still must stack
    (stateless(TensorSpec("TOKENS", "INT64", (-1,)), TensorSpec("MASK", "BOOL", (-1,)),
               config={"input": [{"name": "TOKENS", "allow_ragged_batch": True}, {"name": "MASK"}]}), "run"),
    (stateless(TensorSpec("TOKENS", "INT64", (-1,)), scheduler="none"), "request"),  # no batcher: nothing is stacked
])
def test_sizes_vary_per_request_wherever_triton_does_not_stack_the_requests(f, per):
    source = drawn_source(f)
    assert source.sizes.per == per
    assert (len(set(sent_shapes(source, "TOKENS"))) > 1) == (per == "request")


def test_the_range_comes_down_where_several_variable_dimensions_would_hold_too_many_elements():
    f = model(TensorSpec("CUBE", "FP32", (-1,) * 6), TensorSpec("TOKENS", "INT64", (-1,)))
    sizes = inputs.drawn_sizes(f, inputs.concrete_shapes(f, {}), 0)
    assert (sizes.low, sizes.high) == (1, 10)  # 10**6 fits in MAX_ELEMENTS, 11**6 does not


def test_shape_fixes_the_sizes_and_the_used_shapes_say_what_sized_each_input():
    fixed = drawn_source(VARLEN, shapes={"TOKENS": (5,), "MASK": (5,), "IMAGE": (3, 2, 2)})
    assert fixed.sizes is None and set(sent_shapes(fixed, "TOKENS")) == {(5,)}
    assert {s.name: (s.sized_by, s.smallest, s.largest) for s in fixed.used().shapes} == {
        "TOKENS": ("shape", (5,), (5,)), "MASK": ("shape", (5,), (5,)), "IMAGE": ("shape", (3, 2, 2), (3, 2, 2)), "SCALE": ("model", (1,), (1,))}
    partly = drawn_source(VARLEN, shapes={"TOKENS": (5,)})
    assert set(sent_shapes(partly, "TOKENS")) == {(5,)} and len(set(sent_shapes(partly, "MASK"))) > 1


def test_the_used_shapes_are_the_smallest_and_largest_sent():
    source = drawn_source(VARLEN, seed=9, sessions=5, steps=7)
    used = source.used()
    tokens = [shape[0] for shape in sent_shapes(source, "TOKENS")]
    shapes = {s.name: s for s in used.shapes}
    assert (shapes["TOKENS"].sized_by, shapes["TOKENS"].smallest, shapes["TOKENS"].largest) == ("drawn", (min(tokens),), (max(tokens),))
    assert shapes["IMAGE"].smallest == (3, min(tokens), min(tokens)) and shapes["IMAGE"].largest == (3, max(tokens), max(tokens))
    assert used.to_json()["sizes"] == {"low": 1, "high": 16, "per": "request"}
    assert shapes["TOKENS"].to_json() == {"name": "TOKENS", "dims": [-1], "sized_by": "drawn", "smallest": [min(tokens)],
                                          "largest": [max(tokens)]}


def test_a_data_files_shapes_are_its_entries_own():
    f = model(TensorSpec("T", "INT64", (-1,)), TensorSpec("H", "FP32", (2,)))
    document = {"data": [[{"T": [1, 2, 3], "H": [0, 0]}, {"T": [4], "H": [0, 0]}], [{"T": {"content": [1, 2, 3, 4, 5, 6], "shape": [6]}, "H": [1, 1]}]]}
    sequences = input_data.sequences(document, f, inputs.concrete_shapes(f, {}))
    used = inputs.FromData(f, sequences, [2, 1, 2]).used()
    assert used.sizes is None
    assert {s.name: (s.sized_by, s.smallest, s.largest) for s in used.shapes} == {"T": ("data_file", (1,), (6,)), "H": ("model", (2,), (2,))}


@pytest.mark.parametrize(("text", "parsed"), [("IMAGE:3,224,224", ("IMAGE", (3, 224, 224))), ("a:b:5", ("a:b", (5,)))])
def test_shape_option_as_perf_analyzer_writes_it(text, parsed):
    assert inputs.parse_shape(text) == parsed


@pytest.mark.parametrize("text", ["IMAGE", "IMAGE:", "IMAGE:3,x", ":3", "IMAGE:0"])
def test_shape_option_that_does_not_parse(text):
    with pytest.raises(LabError) as err:
        inputs.parse_shape(text)
    assert err.value.code == "check_shape_syntax"


def test_sequence_sessions_mix_short_and_long():
    lengths = inputs.session_lengths(10, 24, seed=0, mixed=True)
    assert lengths[0] == 24 and lengths[1] == 8 and all(8 <= n <= 24 for n in lengths)
    assert inputs.session_lengths(3, 24, seed=0, mixed=False) == [24, 24, 24]


# -- perf_analyzer --input-data -----------------------------------------------------------------
SEQ = model(TensorSpec("INPUT", "INT32", (1,)))


def test_one_stream_per_sequence_with_its_own_length():
    document = {"data": [[{"INPUT": [1]}, {"INPUT": [2]}, {"INPUT": [3]}], [{"INPUT": [7]}]]}
    sequences = input_data.sequences(document, SEQ, {"INPUT": (1,)})
    assert [len(s) for s in sequences] == [3, 1]
    assert sequences[0][2]["INPUT"].tolist() == [3] and sequences[0][2]["INPUT"].dtype == np.int32
    source = inputs.FromData(SEQ, sequences, lengths=[3, 1, 3])
    assert source.arrays(2, 1)["INPUT"].tolist() == [[2]]  # session 2 plays stream 0 again, with the batch dimension


def test_a_flat_data_list_is_one_stream():
    assert len(input_data.sequences({"data": [{"INPUT": [1]}, {"INPUT": [2]}]}, SEQ, {"INPUT": (1,)})) == 1


def test_content_and_shape_for_variable_dimensions_and_b64_for_every_kind():
    f = model(TensorSpec("T", "INT64", (-1,)), TensorSpec("H", "FP16", (2,)), TensorSpec("S", "BYTES", (2,)),
              TensorSpec("B", "BF16", (1,)))
    h = base64.b64encode(np.array([1.5, -2], dtype="<f2").tobytes()).decode()
    s = base64.b64encode(struct.pack("<I", 2) + b"hi" + struct.pack("<I", 0)).decode()
    b = base64.b64encode(np.array([0.5], dtype=ml_dtypes.bfloat16).tobytes()).decode()
    entry = {"T": {"content": [4, 5, 6], "shape": [3]}, "H": {"b64": h}, "S": {"content": {"b64": s}, "shape": [2]}, "B": {"b64": b}}
    (sequence,) = input_data.sequences({"data": [entry, {**entry, "T": [1, 2]}]}, f, {"T": None, "H": (2,), "S": (2,), "B": (1,)})
    assert sequence[0]["T"].tolist() == [4, 5, 6] and sequence[1]["T"].tolist() == [1, 2]  # one variable dim: the count says
    assert sequence[0]["H"].tolist() == [1.5, -2.0]
    assert sequence[0]["S"].tolist() == [b"hi", b""]
    assert float(sequence[0]["B"][0]) == 0.5


@pytest.mark.parametrize(("document", "code"), [
    ({"nodata": []}, "check_data_no_data"),
    ({"data": [[{"INPUT": [1]}], {"INPUT": [1]}]}, "check_data_mixed_streams"),
    ({"data": [{"INPUT": [1], "EXTRA": [2]}]}, "check_data_unknown_input"),
    ({"data": [{}]}, "check_data_missing_input"),
    ({"data": [{"INPUT": [1, 2]}]}, "check_data_size_mismatch"),
    ({"data": [{"INPUT": {"content": [1, 2], "shape": [2]}}]}, "check_data_shape_mismatch"),
    ({"data": [{"INPUT": ["one"]}]}, "check_data_bad_value"),
    ({"data": [{"INPUT": {"b64": "!!"}}]}, "check_data_bad_base64"),
    ({"data": [[]]}, "check_data_empty_stream"),
])
def test_a_data_file_that_does_not_match_the_model_names_where(document, code):
    with pytest.raises(LabError) as err:
        input_data.sequences(document, SEQ, {"INPUT": (1,)}, source="f.json")
    assert err.value.code == code
    assert english(err.value).startswith("f.json")


def test_an_unreadable_data_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(LabError) as err:
        input_data.load(bad)
    assert err.value.code == "check_data_unreadable" and str(bad) in english(err.value)


# -- perf_analyzer's validation_data: golden outputs --------------------------------------------
def with_outputs(base: ModelFacts, *outputs: TensorSpec, sequence: bool = True) -> ModelFacts:
    return ModelFacts(**{**base.__dict__, "outputs": outputs, "scheduler": "direct" if sequence else "dynamic"})


GOLD = with_outputs(SEQ, TensorSpec("OUTPUT", "INT64", (1,)), TensorSpec("SCORE", "FP32", (1,)))


def test_golden_outputs_mirror_data_one_list_of_entries_per_stream():
    document = {"data": [[{"INPUT": [1]}, {"INPUT": [2]}], [{"INPUT": [7]}]],
                "validation_data": [[{"OUTPUT": [2], "SCORE": [0.5]}, {"OUTPUT": [5]}], [{"SCORE": [8.0]}]]}
    golden = input_data.golden(document, GOLD)
    assert [len(s) for s in golden] == [2, 1]
    assert golden[0][0]["OUTPUT"].dtype == np.int64 and golden[0][0]["SCORE"].dtype == np.float32
    assert set(golden[0][1]) == {"OUTPUT"} and set(golden[1][0]) == {"SCORE"}  # an output left out is not compared there
    assert input_data.golden({"data": document["data"]}, GOLD) is None  # no validation_data: nothing to compare with


def test_golden_outputs_in_b64_including_bytes_and_content_with_shape():
    f = with_outputs(SEQ, TensorSpec("TEXT", "BYTES", (2,)), TensorSpec("H", "FP16", (2,)), TensorSpec("V", "INT32", (-1,)),
                     TensorSpec("B", "BF16", (1,)))
    text = base64.b64encode(struct.pack("<I", 3) + b"yes" + struct.pack("<I", 2) + b"no").decode()
    half = base64.b64encode(np.array([0.25, -4], dtype="<f2").tobytes()).decode()
    bf16 = base64.b64encode(np.array([1.5], dtype=ml_dtypes.bfloat16).tobytes()).decode()
    document = {"data": [{"INPUT": [1]}, {"INPUT": [2]}],
                "validation_data": [{"TEXT": {"b64": text}, "H": {"b64": half}, "V": {"content": [1, 2, 3], "shape": [3]},
                                     "B": {"b64": bf16}},
                                    {"TEXT": ["a", "b"], "V": {"content": {"b64": base64.b64encode(np.array([9], "<i4").tobytes()).decode()},
                                                               "shape": [1]}}]}
    (sequence,) = input_data.golden(document, f)
    assert sequence[0]["TEXT"].tolist() == [b"yes", b"no"] and sequence[1]["TEXT"].tolist() == [b"a", b"b"]
    assert sequence[0]["H"].tolist() == [0.25, -4.0] and float(sequence[0]["B"][0]) == 1.5
    assert sequence[0]["V"].tolist() == [1, 2, 3] and sequence[1]["V"].tolist() == [9]


def test_a_stateless_models_golden_outputs_as_one_stream_of_entries():
    f = with_outputs(SEQ, TensorSpec("OUTPUT", "FP32", (1,)), sequence=False)
    document = {"data": [{"INPUT": [1]}, {"INPUT": [2]}, {"INPUT": [3]}], "validation_data": [{"OUTPUT": [1.0]}, {"OUTPUT": [2.0]}, {"OUTPUT": [3.0]}]}
    sequences = input_data.sequences(document, f, {"INPUT": (1,)})
    golden = input_data.golden(document, f)
    source = inputs.FromData(f, sequences, lengths=[7], golden=golden)
    # a stateless answer depends on its inputs alone: request k compares with golden entry k % 3, batch dimension in front
    assert [source.expected(0, k)["OUTPUT"].tolist() for k in range(5)] == [[[1.0]], [[2.0]], [[3.0]], [[1.0]], [[2.0]]]


def test_a_sequence_models_wrapped_steps_have_no_golden_output_and_sessions_wrap_onto_streams():
    document = {"data": [[{"INPUT": [1]}, {"INPUT": [2]}, {"INPUT": [3]}], [{"INPUT": [4]}]],
                "validation_data": [[{"OUTPUT": [2]}, {"OUTPUT": [5]}, {"OUTPUT": [9]}], [{"OUTPUT": [5]}]]}
    source = inputs.FromData(GOLD, input_data.sequences(document, GOLD, {"INPUT": (1,)}), [3, 3, 3], input_data.golden(document, GOLD))
    assert [source.expected(0, k)["OUTPUT"].tolist() for k in range(3)] == [[[2]], [[5]], [[9]]]
    assert source.expected(1, 0)["OUTPUT"].tolist() == [[5]] and source.expected(1, 1) is None  # stream 1 has one step
    assert source.expected(2, 2)["OUTPUT"].tolist() == [[9]]  # session 2 plays stream 0 again
    assert source.arrays(1, 2)["INPUT"].tolist() == [[4]]  # the inputs do wrap, as perf_analyzer's do
    assert source.wrapped() == [1]
    assert inputs.Generated(GOLD, {"INPUT": (1,)}, [2]).expected(0, 0) is None


@pytest.mark.parametrize(("validation", "code", "words_"), [
    ({"data": [[{"INPUT": [1]}]], "validation_data": [{"OUTPUT": [1]}]}, "check_golden_not_streams", "one list of output entries per stream"),
    ({"data": [{"INPUT": [1]}], "validation_data": [[{"OUTPUT": [1]}]]}, "check_golden_not_entries", "one entry of outputs per entry"),
    ({"data": [{"INPUT": [1]}], "validation_data": {"OUTPUT": [1]}}, "check_golden_not_entries", "in the same order"),
    ({"data": [[{"INPUT": [1]}], [{"INPUT": [2]}]], "validation_data": [[{"OUTPUT": [1]}]]}, "check_golden_stream_count",
     '"validation_data" holds 1 stream and "data" 2'),
    ({"data": [[{"INPUT": [1]}, {"INPUT": [2]}]], "validation_data": [[{"OUTPUT": [1]}]]}, "check_golden_step_count",
     'stream 1 has 2 steps in "data" and 1 in "validation_data"'),
    ({"data": [{"INPUT": [1]}], "validation_data": [7]}, "check_golden_not_an_entry", "golden stream 1, step 1 is not an object"),
    ({"data": [{"INPUT": [1]}], "validation_data": [{"PROBS": [1]}]}, "check_golden_unknown_output", "names PROBS, which the model"),
    ({"data": [{"INPUT": [1]}], "validation_data": [{"OUTPUT": {"content": [1], "shape": "1"}}]}, "check_golden_bad_shape", "output OUTPUT"),
    ({"data": [{"INPUT": [1]}], "validation_data": [{"OUTPUT": {"content": [1, 2], "shape": [2]}}]}, "check_golden_shape_mismatch",
     "does not fit the model's dimensions [1]"),
    ({"data": [{"INPUT": [1]}], "validation_data": [{"OUTPUT": [1, 2]}]}, "check_golden_size_mismatch", "the data has 2"),
    ({"data": [{"INPUT": [1]}], "validation_data": [{"OUTPUT": [1.5]}]}, "check_golden_bad_value", "are not INT64 data"),
    ({"data": [{"INPUT": [1]}], "validation_data": [{"OUTPUT": {"b64": "!!"}}]}, "check_golden_bad_base64", "is not valid base64"),
    ({"data": [{"INPUT": [1]}], "validation_data": [{"SCORE": [float("nan")]}]}, "check_golden_nan", "output SCORE holds NaN"),
])
def test_golden_outputs_that_do_not_match_the_model_name_the_stream_step_and_output(validation, code, words_):
    with pytest.raises(LabError) as err:
        input_data.golden(validation, GOLD, source="g.json")
    assert err.value.code == code
    assert english(err.value).startswith("g.json") and words_ in english(err.value)


def test_golden_outputs_of_a_variable_output_need_their_shape():
    f = with_outputs(SEQ, TensorSpec("GRID", "INT32", (-1, -1)))
    with pytest.raises(LabError) as err:
        input_data.golden({"data": [{"INPUT": [1]}], "validation_data": [{"GRID": [1, 2, 3, 4]}]}, f, source="g.json")
    assert err.value.code == "check_golden_shape_needed" and 'give "shape" with its "content"' in english(err.value)
    (sequence,) = input_data.golden({"data": [{"INPUT": [1]}], "validation_data": [{"GRID": {"content": [1, 2, 3, 4], "shape": [2, 2]}}]}, f)
    assert sequence[0]["GRID"].shape == (2, 2)


# -- comparing replies --------------------------------------------------------------------------
def test_differences_by_kind():
    assert compare.difference(np.array([3, 4], np.int32), np.array([3, 9], np.int32), "INT32") == 5.0
    assert compare.difference(np.array([2**64 - 1], np.uint64), np.array([0], np.uint64), "UINT64") == float(2**64 - 1)
    assert compare.difference(np.array([True, False]), np.array([False, True]), "BOOL") == 2.0
    assert compare.difference(np.array([b"a", b"b"], object), np.array([b"a", b"c"], object), "BYTES") == 1.0
    assert compare.difference(np.array([1000.0], np.float32), np.array([1001.0], np.float32), "FP32") == pytest.approx(1e-3)
    assert compare.difference(np.array([0.5]), np.array([0.75]), "FP64") == 0.25  # absolute below 1
    assert compare.difference(np.array([np.nan]), np.array([1.0]), "FP32") == compare.MISSING
    assert compare.difference(np.array([1, 2]), np.array([1, 2, 3]), "INT64") == compare.MISSING
    assert compare.difference(np.array([1]), None, "INT64") == compare.MISSING


@pytest.mark.parametrize("datatype", ["FP16", "BF16", "FP32", "FP64"])
def test_nan_is_never_equal_not_even_to_nan(datatype):
    dtype = NUMPY[datatype]
    nan, inf = np.array([1.0, np.nan], dtype=dtype), np.array([1.0, np.inf], dtype=dtype)
    assert compare.difference(nan, nan.copy(), datatype) == compare.MISSING
    assert compare.difference(np.array([1.0, 2.0], dtype=dtype), nan, datatype) == compare.MISSING
    assert compare.difference(nan, np.array([1.0, 2.0], dtype=dtype), datatype) == compare.MISSING
    # Inf against a number is as far as it gets (inf / inf is NaN, which must not pass as a small difference)
    assert compare.difference(inf, np.array([1.0, 2.0], dtype=dtype), datatype) == compare.MISSING
    assert compare.difference(np.array([1.0, 2.0], dtype=dtype), inf, datatype) == compare.MISSING
    assert compare.difference(np.array([-np.inf], dtype=dtype), np.array([np.inf], dtype=dtype), datatype) == compare.MISSING
    assert compare.difference(inf, inf.copy(), datatype) == 0.0  # the same Inf: the finite check, not this, says it is no number
    assert compare.non_finite(nan, datatype) and compare.non_finite(inf, datatype)
    assert not compare.non_finite(np.array([1.0], dtype=dtype), datatype)
    assert not compare.non_finite(np.array([1], dtype=np.int64), "INT64")


def test_a_replys_first_elements_name_nan_and_inf_in_words_json_can_carry():
    from app.checker.engine.sequences.measurement import _first

    assert _first(np.array([[np.nan, np.inf, -np.inf, 1.5, 9.0]], np.float32)) == ["nan", "inf", "-inf", 1.5]
    assert _first(np.array([b"ab"], object)) == ["ab"]


def test_tolerances():
    assert compare.tolerance("N", "INT32", 0.0).value == 0.0
    assert compare.tolerance("N", "INT32", 1.0).reproducible is False
    assert compare.tolerance("F", "FP32", 0.0).value == compare.FLOOR["FP32"]
    assert compare.tolerance("F", "FP32", 1e-5).value == pytest.approx(4e-5)
    assert compare.tolerance("F", "FP16", 1.0).value == compare.CEILING["FP16"]
    user = compare.tolerance("F", "FP32", 1e-5, user=1e-6)
    assert (user.value, user.source, user.reproducible) == (1e-6, "user", False)


def test_the_recognisers_placement_outputs_are_left_out_by_the_lab():
    recogniser = model(TensorSpec("AUDIO", "FP32", (160,)), TensorSpec("SESSION", "UINT64", (1,)))
    recogniser = ModelFacts(**{**recogniser.__dict__, "outputs": tuple(TensorSpec(n, "INT32", (1,)) for n in
                                                                       ("SYMBOL", "INSTANCE", "SLOT", "BATCH", "STATE_IN", "STATE_OWNER"))})
    assert compare.default_ignored(recogniser) == ("INSTANCE", "SLOT", "BATCH")
    assert compare.default_ignored(SEQ) == ()


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        (CheckOptions(), []),
        (CheckOptions(sessions=0, steps=0, think_ms=-1.0), ["check_sessions_range", "check_steps_range", "think_ms_range"]),
        (CheckOptions(seed=-1), ["check_seed_range"]),
        (CheckOptions(seed=2**32), ["check_seed_range"]),
        (CheckOptions(tolerance=-0.1, only=("nope",)), ["check_tolerance_range", "check_unknown"]),
        (CheckOptions(max_corrid=0, string_id_bytes=0, gpus=-1), ["checker_expectation_low"] * 3),
        (CheckOptions(max_corrid=2**64), ["checker_corrid_above_uint64"]),
        (CheckOptions(max_corrid=2**64 - 1, string_id_bytes=36, gpus=0, backend="onnxruntime", seed=2**32 - 1), []),
    ],
)
def test_options_that_cannot_be_right_are_refused_as_codes_and_words(options, codes):
    problems = options.problems()
    assert [p.code for p in problems] == codes
    for problem in problems:  # every code has its words (a missing one is a KeyError), not the bare code
        assert problem.code not in error(LabError([problem]), words("en"))


def test_the_stated_figures_reach_the_review_unchanged():
    options = CheckOptions(sessions=40, think_ms=250.0, max_corrid=7, string_id_bytes=36, backend="onnxruntime", gpus=2)
    assert options.expectations() == Expectations(think_ms=250.0, sessions=40, max_corrid=7, string_corrid_length=36,
                                                  backend="onnxruntime", gpus=2)
