"""``js_json.dumps`` must write what JavaScript's ``JSON.stringify`` writes."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_lsp.session import js_json


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (3e-06, "0.000003"),
        (1e-07, "1e-7"),
        (1.2345e-7, "1.2345e-7"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345678901234.0, "1.2345678901234569e+23"),
        (12345678901234567890, "12345678901234567000"),
        (0.1 + 0.2, "0.30000000000000004"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (5e-324, "5e-324"),
    ],
)
def test_numbers_are_written_as_javascript_writes_them(value, expected):
    assert js_json.dumps(value) == expected


def test_integer_like_keys_come_first_in_ascending_order():
    value = {"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "4294967295": 6}
    assert js_json.dumps(value) == '{"2":4,"10":2,"b":1,"a":3,"01":5,"4294967295":6}'


def test_strings_keep_non_ascii_and_escape_controls_and_lone_surrogates():
    assert js_json.dumps("é😀\u2028\x7f") == '"é😀\u2028\x7f"'
    assert js_json.dumps('\x00\x1f\b\f\n\r\t"\\') == '"\\u0000\\u001f\\b\\f\\n\\r\\t\\"\\\\"'
    assert js_json.dumps("a\ud800b") == '"a\\ud800b"'


def test_undefined_values_are_left_out_of_objects_and_null_in_arrays():
    assert js_json.dumps({"a": js_json.UNDEFINED, "b": [js_json.UNDEFINED, 1]}) == '{"b":[null,1]}'


def test_compact_separators_and_key_order_are_kept():
    assert js_json.dumps({"type": "x", "id": "1", "nested": {"z": [1, {"y": None}]}}) == (
        '{"type":"x","id":"1","nested":{"z":[1,{"y":null}]}}'
    )


def test_utf16_length_counts_astral_characters_twice():
    assert js_json.utf16_length("ab") == 2
    assert js_json.utf16_length("é") == 1
    assert js_json.utf16_length("😀x") == 3


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_output_is_valid_json_that_reads_back_to_the_same_value(value):
    text = js_json.dumps(value)
    assert json.loads(text, parse_int=_as_javascript_number) == _without_infinities(value)


def _as_javascript_number(text: str):
    number = int(text)
    return number if abs(number) <= 2**53 else float(number)  # JavaScript numbers are doubles


def _without_infinities(value):
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return None
    if isinstance(value, list):
        return [_without_infinities(item) for item in value]
    if isinstance(value, dict):
        return {key: _without_infinities(item) for key, item in value.items()}
    return value
