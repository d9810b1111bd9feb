"""pgbarrier.pgproto.jsonb: a jsonb value printed as PostgreSQL 15 prints it (its outputs
below were taken from PostgreSQL 15)."""

from __future__ import annotations

import pytest

from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.jsonb import jsonb_column, jsonb_text


@pytest.mark.parametrize("text, pg", [
    ('{"b": 1, "a": 2, "aa": [1, 1.50, 1e2, -0, 1E-2, 0.0, -1.5e-3], "a": 3, "": null, '
     '"\u00e9": "x\\u00e9\\n\\t\\"\\\\/", "ctl": "\\u0001"}',
     '{"": null, "a": 3, "b": 1, "aa": [1, 1.50, 100, 0, 0.01, 0.0, -0.0015], '
     '"\u00e9": "x\u00e9\\n\\t\\"\\\\/", "ctl": "\\u0001"}'),
    ('"abc"', '"abc"'), ("5", "5"), ("null", "null"), ("[]", "[]"), ("{}", "{}"),
    ('[{"b":1,"a":[{}]}]', '[{"a": [{}], "b": 1}]'),
    ("1e100", "1" + "0" * 100),
    ('{"b":true,"a":false}', '{"a": false, "b": true}'),
])
def test_jsonb_text_is_postgresqls(text, pg):
    assert jsonb_text(text) == pg


def test_text_that_is_not_json_is_kept():
    assert jsonb_text("{oops") == "{oops"


def test_one_rule_for_a_value_and_a_column():
    values = ['{"b": 1, "a": 2}', None, "[1,2]"]
    assert jsonb_column(values) == ['{"a": 2, "b": 1}', None, "[1, 2]"]
    assert pgt.to_text('{"b":1,"a":2}', pgt.JSONB) == '{"a": 2, "b": 1}'
    assert pgt.to_text('{"b":1,"a":2}', pgt.JSON) == '{"b":1,"a":2}'  # json keeps its text
    assert pgt.encode_binary(pgt.JSONB, '{"b":1}') == b'\x01{"b": 1}'
    assert pgt.encoder(pgt.JSONB, 0)('[1,2]') == b"[1, 2]"
    assert pgt.encoder(pgt.ARRAY_OF[pgt.JSONB], 0)(['{"b":1,"a":2}']) == \
        b'{"{\\"a\\": 2, \\"b\\": 1}"}'
