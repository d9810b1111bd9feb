-- PostgreSQL's data type formatting functions on the DuckDB backend
CREATE TABLE f (id int, ts timestamp, tz timestamptz, d date, i interval, tm time, n numeric(12,4), x float8, b bigint);
INSERT INTO f VALUES
  (1, '2020-01-05 13:05:06.789123', '2020-01-05 13:05:06.789123+00', '2020-12-31', '1 year 2 mons 3 days 27:04:05.5', '13:04:05.5', 12345.678, -0.5, 1987),
  (2, '0099-03-04 00:00:05', '2021-06-15 00:00:00+00', '2021-01-01', '-1 year -2 mons -3 days -04:05:06', '00:00:00', -0.001, 1e20, -5),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
SELECT id, to_char(ts, 'YYYY-MM-DD HH24:MI:SS') AS iso, to_char(ts, 'FMMonth DDth, YYYY') AS long,
       to_char(ts, 'Dy DD Mon YYYY HH12:MI AM') AS short FROM f ORDER BY id;
SELECT id, to_char(ts, 'YYYY YYY YY Y Y,YYY CC J Q W WW IW IDDD ID D DDD IYYY IYY IY I') AS fields
  FROM f ORDER BY id;
SELECT id, to_char(ts, 'DDth DDTH FMDDth FMDDTH Dth MMth YYYYth HH24th') AS ordinals FROM f ORDER BY id;
SELECT id, to_char(ts, 'TZ tz OF TZH TZM') AS zone, to_char(tz, 'TZ tz OF TZH:TZM FMOF') AS tzzone
  FROM f ORDER BY id;
SELECT id, to_char(ts, '"quoted" \"q\" \\ \x YYYY"a\"b"') AS text FROM f ORDER BY id;
SELECT id, to_char(ts, 'RM rm FMRM FMrm Month MONTH month FMMonth') AS months,
       to_char(ts, 'Day DAY day FMDay Dy DY dy Mon MON mon TMMonth TMDay') AS days FROM f ORDER BY id;
SELECT id, to_char(ts, 'HH HH12 HH24 AM am PM pm A.M. a.m. MS US FF1 FF2 FF3 FF4 FF5 FF6') AS times,
       to_char(ts, 'AD BC ad a.d. B.C. SSSS SSSSS FMHH12:FMMI FMSS FMDDD') AS more FROM f ORDER BY id;
SELECT id, to_char(d, 'YYYY-MM-DD TZ Day') AS dated, to_char(tm, 'HH12:MI:SS AM HH24 SSSS MS') AS timed
  FROM f ORDER BY id;
SELECT id, to_char(i, 'YYYY MM DD HH HH12 HH24 MI SS MS US CC Q RM FMRM SSSS') AS iv FROM f ORDER BY id;
SELECT to_char(interval '1 day', 'Mon');
SELECT to_char(now(), NULL) AS nofmt, to_char(timestamp '2020-01-01', '') AS empty;
-- numbers
SELECT id, to_char(n, '999,999.99') AS a, to_char(n, 'FM999,999.99') AS b, to_char(x, '9.99EEEE') AS c,
       to_char(b, 'RN') AS d, to_char(b, 'FMRN') AS e, to_char(b, '9999th') AS f FROM f ORDER BY id;
SELECT id, to_char(n, 'S99999.9') AS a, to_char(n, '99999.9PR') AS b, to_char(n, '99999.9MI') AS c,
       to_char(n, 'SG99999.9') AS d, to_char(n, 'PL99999.9') AS e, to_char(n, 'L99999.99') AS f,
       to_char(b, '9999V99') AS g, to_char(n, '0000099.999') AS h FROM f ORDER BY id;
SELECT to_char(12, '999') AS a, to_char(-12, '999') AS b, to_char(0.5, '9.99') AS c, to_char(0.5, '0.99') AS d,
       to_char(1, 'FM9.99') AS e, to_char(1.5, 'FM9.90') AS f, to_char(5, '9099') AS g, to_char(123, '99') AS h,
       to_char(0, '9.99') AS i, to_char(0, 'FM9.99') AS j, to_char(100, 'FM999.') AS k, to_char(0, '999') AS l;
SELECT to_char(1234567.891, '9G999G999D99') AS a, to_char(-0.1, 'FM9.99') AS b, to_char(-1234.5, '9,999.99S') AS c,
       to_char(0.001, '0.999') AS d, to_char(-0.001, '9.9') AS e, to_char(1234, '9,9') AS f,
       to_char(12, '0999') AS g, to_char(-12, '0999') AS h, to_char(12, 'FM0999') AS i,
       to_char(12.5, 'FM99th') AS j, to_char(3, 'FM9th') AS k, to_char(21, '999th') AS l, to_char(-12, '999th') AS m;
SELECT to_char(12, '"x"999"y" abc') AS a, to_char(0.5, '.99') AS b, to_char(12345, '9.99EEEE') AS c,
       to_char(3.5::float8, '9') AS d, to_char(2.5::float8, '9') AS e, to_char(2.5, '9') AS f,
       to_char(5, 'FMRN') AS g, to_char(5, 'rn') AS h, to_char(4000, 'RN') AS i, to_char(1.5::real, '9.9') AS j;
SELECT to_char(1, '9.9.9');
SELECT to_char(1, '9PR9');
SELECT to_char(1, 'FM9EEEE');
-- text to date / timestamp / number
SELECT to_date('2020-01-05', 'YYYY-MM-DD') AS a, to_date('20-1-5', 'YYYY-MM-DD') AS b,
       to_date('2020 Jan 05', 'YYYY Mon DD') AS c, to_date('05 JANUARY 2020', 'DD Month YYYY') AS d,
       to_date('2020/01/05', 'YYYY-MM-DD') AS e, to_date('  2020-01-05', 'YYYY-MM-DD') AS f,
       to_date('2020-01-05 garbage', 'YYYY-MM-DD') AS g, to_date('2020-01', 'YYYY-MM-DD') AS h,
       to_date('2020', 'YYYY') AS i, to_date('2020-060', 'YYYY-DDD') AS j, to_date('2451545', 'J') AS k,
       to_date('20 05 1', 'YY MM D') AS l, to_date('1,999 XII 31', 'Y,YYY RM DD') AS m;
SELECT to_timestamp('2020-01-05 01:02:03 pm', 'YYYY-MM-DD HH:MI:SS am') AS a,
       to_timestamp('20200105', 'YYYYMMDD') AS b, to_timestamp('2020-01-05T10:00', 'YYYY-MM-DD"T"HH24:MI') AS c,
       to_timestamp('2020-01-05 10:00:00.5', 'YYYY-MM-DD HH24:MI:SS.MS') AS d,
       to_timestamp('2020-01-05 10:00:00.123456', 'YYYY-MM-DD HH24:MI:SS.US') AS e,
       to_timestamp('05.01.2020 10:11', 'DD.MM.YYYY HH24:MI') AS f,
       to_timestamp('2020-01-05 10 +05', 'YYYY-MM-DD HH24 TZH') AS g,
       to_timestamp('2020-01-05 3600', 'YYYY-MM-DD SSSS') AS h,
       to_timestamp('2020-01-05 12:00 am', 'YYYY-MM-DD HH12:MI am') AS i,
       to_timestamp('21st of March 2020', 'DDth "of" FMMonth YYYY') AS j;
SELECT id, to_timestamp(to_char(ts, 'YYYY-MM-DD HH24:MI:SS'), 'YYYY-MM-DD HH24:MI:SS') AS roundtrip,
       to_date(to_char(d, 'DD/MM/YYYY'), 'DD/MM/YYYY') AS droundtrip FROM f ORDER BY id;
SELECT to_date('2020-13-01', 'YYYY-MM-DD');
SELECT to_date('2020-02-30', 'YYYY-MM-DD');
SELECT to_timestamp('2020-01-05 10:00', 'YYYY-MM-DD HH24:MI OF') AS short_input;
SELECT to_timestamp('2020-01-05 10:00 +05', 'YYYY-MM-DD HH24:MI OF');
SELECT to_number('12,454.8-', '99G999D9S') AS a, to_number('$1,234.56', 'L9G999D99') AS b,
       to_number('1 234', '9 999') AS c, to_number('12.34', '99.99') AS d, to_number('<12>', '99PR') AS e;
