-- declared lengths, precision and scale, as PostgreSQL keeps them
CREATE TABLE t1 (v varchar(10), c char(3), n numeric(5,2), s smallint, i integer);
INSERT INTO t1 (v) VALUES ('12345678901');
INSERT INTO t1 (v) VALUES ('1234567890');
INSERT INTO t1 (v) VALUES ('12345     ');
INSERT INTO t1 (c) VALUES ('abcd');
INSERT INTO t1 (c) VALUES ('x');
INSERT INTO t1 (n) VALUES (1234.5);
INSERT INTO t1 (n) VALUES (1.235);
INSERT INTO t1 (s) VALUES (40000);
INSERT INTO t1 (i) VALUES (3000000000);
UPDATE t1 SET v = 'abcdefghijkl' WHERE c = 'x';
SELECT v, c, n, s, i FROM t1 ORDER BY v NULLS LAST, c NULLS LAST, n NULLS LAST;
SELECT 'x'::char(3) AS c3, 'abcdef'::varchar(3) AS v3, length('x'::char(3)) AS len;
SELECT 'abcdef'::char(2), 'ab'::char(4) || '|', 12.345::numeric(4,2);
SELECT 123.45::numeric(4,2);
SELECT CAST('abcdef' AS character varying(4));
-- declared precisions and bit lengths
CREATE TABLE ts (a timestamp(0), b timestamptz(3), c timestamp(2), d time(2));
INSERT INTO ts VALUES ('2020-01-01 10:00:00.7', '2020-01-01 10:00:00.12345+00', '2020-01-01 10:00:00.555', '10:00:00.555');
SELECT a, b, c, d FROM ts;
\d ts
CREATE TABLE bits (e bit(3), f bit);
INSERT INTO bits VALUES (B'101', B'1');
INSERT INTO bits (e) VALUES (B'10');
INSERT INTO bits (f) VALUES (B'10');
SELECT e, f FROM bits;
