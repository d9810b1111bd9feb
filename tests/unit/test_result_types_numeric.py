"""PostgreSQL's numeric scales (duckdb_results.numeric), checked against answers PostgreSQL 15
gave for the same inputs, and the names PostgreSQL gives unaliased columns (colnames)."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from pgbarrier.backends.duckdb_results import numeric as num
from pgbarrier.backends.duckdb_results.plan import ResultPlan
from pgbarrier.errors import PgError
from pgbarrier.sql.colnames import postgres_names


@pytest.mark.parametrize("got, text", [
    (num.avg(10, 4), "2.5000000000000000"),           # avg(1,2,3,4)
    (num.avg(7, 3), "2.3333333333333333"),
    (num.avg(3, 3), "1.00000000000000000000"),        # avg(1,1,1): qweight -1
    (num.avg(100000001, 2), "50000000.500000000000"),
    (num.avg(D("6.75"), 3), "2.2500000000000000"),
    (num.div(D("1.0"), D(3)), "0.33333333333333333333"),
    (num.div(D("300.0"), D(7)), "42.8571428571428571"),
    (num.div(D(0), D(4)), "0.00000000000000000000"),
    (num.stddev(3, 7, 21, True), "1.5275252316519467"),   # stddev(1,2,4)
    (num.variance(3, 7, 21, True), "2.3333333333333333"),
    (num.stddev(3, 6, 14, False), "0.81649658092772603273"),  # stddev_pop(1,2,3)
    (num.variance(3, D("7.75"), D("23.3125"), True), "1.6458333333333333"),
    (num.stddev(2, 14, 98, True), "0"),                  # stddev(7,7)
    (num.round_to(D("2.675"), 2), "2.68"), (num.round_to(D("-2.5")), "-3"),
    (num.round_to(D("1234.5"), -2), "1200"), (num.trunc_to(D("2.29"), 1), "2.2"),
    (num.ceil(D("-1.5")), "-1"), (num.floor(D("-1.5")), "-2"),
    (num.from_float(2.4166666666666665), "2.41666666666667"),
    (num.typmod(D("12.345"), ((4 << 16) | 2) + 4), "12.35"),
    (num.mul(D("2.5"), D("1.25")), "3.125"), (num.add(D("1.5"), D("1.25")), "2.75"),
])
def test_numeric_results_print_as_postgresqls(got, text):
    assert format(got, "f") == text


def test_no_rows_and_one_sample_are_null():
    assert num.avg(None, 0) is None and num.stddev(1, 1, 1, True) is None
    assert num.variance(0, None, None, False) is None


def test_errors_are_postgresqls():
    with pytest.raises(PgError) as info:
        num.typmod(D("123.45"), ((4 << 16) | 2) + 4)
    assert info.value.sqlstate == "22003"
    assert info.value.detail == ("A field with precision 4, scale 2 must round to an absolute "
                                 "value less than 10^2.")
    with pytest.raises(PgError) as info:
        num.div(D(1), D(0))
    assert info.value.sqlstate == "22012"


def test_positions_map_back_through_the_edits():
    plan = ResultPlan((), "x", 0, ((7, 17, 60), (40, 0, 18)))
    assert plan.client_position(3) == 3          # before the first edit
    assert plan.client_position(8 + 60) == 8 + 17  # just after the replaced call
    assert plan.client_position(41 + 43 + 18) == 41  # after the appended inputs
    assert plan.client_position(10) == 8           # inside a replacement: its start


@pytest.mark.parametrize("sql, names", [
    ("SELECT array_length(ARRAY[1,2],1), position('b' in 'abc'), strpos('a', 'b')",
     ("array_length", "position", "strpos")),
    ("SELECT 'abcdef'::char(2), 12.345::numeric(4,2), 1::int, 1::bigint, 1.5::float, "
     "x::double precision, 'a'::varchar(3), true::boolean, '1 day'::interval",
     ("bpchar", "numeric", "int4", "int8", "float8", "x", "varchar", "bool", "interval")),
    ("SELECT trim(' a '), trim(leading 'x' from 'xa'), ltrim('a'), substring('abc' from 2), "
     "extract(year from now()), date_part('year', now()), mod(5, 2), 5 % 2",
     ("btrim", "ltrim", "ltrim", "substring", "extract", "date_part", "mod", "?column?")),
    ("SELECT true, NULL, 1::int::text, CASE WHEN true THEN 1 END, CASE WHEN true THEN 1 "
     "ELSE x END, ARRAY[1], ROW(1, 2), EXISTS (SELECT 1), (SELECT 1 AS k), coalesce(1, 2)",
     ("?column?", "?column?", "text", "case", "x", "array", "row", "exists", "k",
      "coalesce")),
    ("SELECT now(), current_timestamp, current_date, count(*) FILTER (WHERE true), "
     "sum(x) OVER (), x AS \"Y\", x AS Z",
     ("now", "current_timestamp", "current_date", "count", "sum", "Y", "z")),
])
def test_columns_are_named_as_postgresql_names_them(sql, names):
    assert postgres_names(sql, len(names)) == names
