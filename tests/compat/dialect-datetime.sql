-- PostgreSQL's date/time arithmetic and functions on the DuckDB backend
CREATE TABLE dt (id int, d date, ts timestamp, tz timestamptz, i interval, tm time);
INSERT INTO dt VALUES
  (1, '2020-01-31', '2020-01-31 10:00:05.5', '2020-01-31 10:00:00+00', '1 mon 2 days 03:00', '10:30'),
  (2, '2000-02-29', '1999-12-31 23:59:59.999999', '2001-06-15 12:30:00+00', '-1 year -2 mons -3 days -04:05:06', '00:00:01.25');
SELECT id, d + 5 AS plus, d - 5 AS minus, d - d AS days, 5 + d AS plus2, d - date '2020-01-01' AS since,
       d - '2020-01-01' AS since2, d + interval '1 day' AS plus_iv, d + tm AS at, d - ts AS diff
  FROM dt ORDER BY id;
SELECT id, ts - ts AS zero, ts - '2020-01-01' AS since, ts + '1 hour' AS later, tz - tz AS tzero,
       ts - interval '1 mon' AS earlier, tz + i AS tzplus FROM dt ORDER BY id;
SELECT '2020-01-31'::date + '1 mon'::interval AS d1, date '2020-02-29' - date '2020-01-01' AS d2,
       date '2020-01-01' + 7 AS d3, current_date - current_date AS d4,
       now() - interval '1 day' < now() AS d5, current_date - 7 < current_date AS d6;
SELECT interval '1 day' / 2 AS h1, interval '3 hours' * 2 AS h2, 2 * interval '1 hour' AS h3,
       -interval '1 day' AS h4, (interval '3 hours' + interval '1 hour') / 2 AS h5;
SELECT id, extract(epoch from ts) AS epoch, extract(second from ts) AS sec, extract(year from d) AS y,
       extract(epoch from d) AS depoch, extract(epoch from i) AS iepoch, extract(dow from ts) AS dow,
       extract(isodow from ts) AS isodow, extract(doy from d) AS doy, extract(week from d) AS week,
       extract(quarter from d) AS q, extract(month from i) AS im, extract(microseconds from ts) AS us,
       extract(milliseconds from ts) AS ms, extract(century from d) AS c, extract(decade from d) AS dec,
       extract(millennium from d) AS mil, extract(isoyear from d) AS isoy, extract(hour from tm) AS th,
       extract(epoch from tm) AS tepoch, extract(day from i) AS iday FROM dt ORDER BY id;
SELECT id, date_part('epoch', ts) AS epoch, date_part('second', ts) AS sec, date_part('year', d) AS y,
       date_part('dow', ts) AS dow, date_part('day', i) AS iday, date_part('milliseconds', ts) AS ms
  FROM dt ORDER BY id;
SELECT extract(hour from date '2020-01-31');
SELECT id, date_trunc('week', ts) AS w, date_trunc('quarter', ts) AS q, date_trunc('decade', ts) AS dec,
       date_trunc('century', ts) AS c, date_trunc('millennium', ts) AS mil, date_trunc('day', d) AS dd,
       date_trunc('hour', i) AS ih, date_trunc('month', tz) AS tzm, date_trunc('milliseconds', ts) AS ms
  FROM dt ORDER BY id;
SELECT date_trunc('century', timestamp '2000-06-01') AS c1, date_trunc('century', timestamp '2001-06-01') AS c2,
       date_trunc('millennium', timestamp '2000-06-01') AS m1, date_trunc('week', date '2020-01-01') AS w;
SELECT id, age(ts, ts - interval '400 days') AS a1, age(timestamp '2020-01-01', ts) AS a2 FROM dt ORDER BY id;
SELECT make_date(2020, 1, 2) AS md, make_timestamp(2020, 1, 2, 3, 4, 5.5) AS mt,
       make_timestamptz(2020, 1, 2, 3, 4, 5.5) AS mtz, to_timestamp(1.5) AS tt, to_timestamp(0) AS t0;
SELECT justify_days(interval '35 days') AS jd, justify_hours(interval '27 hours') AS jh,
       justify_interval(interval '1 mon -1 hour') AS ji, justify_days(interval '-35 days') AS jdn,
       justify_hours(interval '-27 hours') AS jhn, justify_interval(interval '-1 mon 1 hour') AS jin;
SELECT id, justify_days(i) AS jd, justify_hours(i) AS jh, justify_interval(i) AS ji FROM dt ORDER BY id;
SELECT generate_series(timestamp '2020-01-01', timestamp '2020-01-03', interval '1 day') AS g;
SELECT generate_series(date '2020-01-30', date '2020-02-01', interval '1 day') AS gd;
SELECT * FROM generate_series(timestamp '2020-01-01', timestamp '2020-01-02', interval '12 hours');
SELECT id, generate_series(ts, ts + interval '2 day', interval '1 day') AS g FROM dt ORDER BY id, g;
SELECT date_bin('15 minutes', timestamp '2020-01-31 10:07:05', timestamp '2001-01-01') AS b,
       make_interval(days => 3, hours => 1) AS mi, isfinite(date '2020-01-01') AS f;
