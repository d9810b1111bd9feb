-- DROP with PostgreSQL's object kinds and dependencies
CREATE TABLE t (a int PRIMARY KEY, b int);
CREATE VIEW v AS SELECT * FROM t;
CREATE VIEW w AS SELECT a FROM v;
CREATE TABLE f (x int REFERENCES t (a));
CREATE SEQUENCE sq;
CREATE TABLE g (id int DEFAULT nextval('sq'));
CREATE TABLE s (id serial, q int);
DROP TABLE t;
DROP TABLE t, f;
DROP VIEW t;
DROP INDEX t;
DROP SEQUENCE t;
DROP TABLE IF EXISTS v;
DROP TABLE nosuch;
DROP TABLE IF EXISTS nosuch, nosuch2;
DROP INDEX nosuch;
DROP VIEW nosuch;
DROP TABLE nos.x;
DROP TABLE IF EXISTS nos.x;
DROP SEQUENCE sq;
DROP VIEW v;
CREATE SCHEMA s1;
CREATE TABLE s1.y (a int);
CREATE VIEW s1.yv AS SELECT * FROM s1.y;
DROP TABLE s1.y;
DROP SEQUENCE sq CASCADE;
\d g
DROP VIEW v CASCADE;
SELECT table_name FROM information_schema.views WHERE table_schema = 'public' ORDER BY 1;
DROP TABLE t CASCADE;
\d f
SELECT count(*) FROM pg_class WHERE relname IN ('t', 'v', 'w');
DROP TABLE s;
SELECT relname FROM pg_class WHERE relkind = 'S' ORDER BY 1;
DROP TABLE f, g;
DROP SCHEMA s1;
DROP SCHEMA s1 CASCADE;
DROP SCHEMA IF EXISTS s1;
-- a column named twice
CREATE TABLE dup AS SELECT 1 AS a, 2 AS a;
CREATE VIEW dupv AS SELECT 1 AS a, 2 AS a;
CREATE VIEW dupv2 AS SELECT 1, 2;
CREATE TABLE dup3 (a int, a int);
CREATE MATERIALIZED VIEW dupm AS SELECT 1 AS a, 2 AS a;
CREATE VIEW dupv3 (x, x) AS SELECT 1, 2;
CREATE TABLE dup4 AS SELECT 1 AS a, 2 AS "A";
SELECT count(*) FROM pg_class WHERE relname LIKE 'dup%';
