-- Batch-refresh views: a snapshot that stays put until it is refreshed.
-- Run (in examples/): psql -X -q -a -h 127.0.0.1 -p 4566 -U root -d dev -f batch_refresh.sql
CREATE TABLE sales (id INT, region TEXT, amount INT);
INSERT INTO sales VALUES (1, 'eu', 10), (2, 'us', 20);
-- refreshed every hour by the scheduler; REFRESH runs one now
CREATE MATERIALIZED VIEW sales_by_region BATCH REFRESH EVERY 1 HOUR AS
    SELECT region, sum(amount) AS total, count(*) AS orders FROM sales GROUP BY region;
-- a streaming view shows current data (on the embedded DuckDB; upstream it is
-- PostgreSQL's own materialized view, as of its last REFRESH)
CREATE MATERIALIZED VIEW sales_live AS SELECT count(*) AS orders FROM sales;
INSERT INTO sales VALUES (3, 'eu', 30);
SELECT region, total, orders FROM sales_by_region ORDER BY region;
SELECT orders FROM sales_live;
REFRESH MATERIALIZED VIEW sales_by_region;
SELECT region, total, orders FROM sales_by_region ORDER BY region;
-- pause holds refreshes back
ALTER DATABASE dev PAUSE;
REFRESH MATERIALIZED VIEW sales_by_region;
ALTER DATABASE dev RESUME;
-- RisingWave's rules
CREATE MATERIALIZED VIEW on_top AS SELECT * FROM sales_by_region;
ALTER MATERIALIZED VIEW sales_by_region AS SELECT 1;
CREATE MATERIALIZED VIEW broken BATCH REFRESH AS SELECT * FROM no_such_table;
CREATE MATERIALIZED VIEW bad WITH (refresh.interval.sec = 0) AS SELECT 1;
SHOW MATERIALIZED VIEWS;
SELECT name, status, refresh_interval_sec FROM rw_catalog.rw_batch_refresh_jobs;
SELECT job, trigger, status, rows FROM rw_catalog.rw_refresh_history ORDER BY run_id;
DROP MATERIALIZED VIEW sales_by_region;
DROP MATERIALIZED VIEW IF EXISTS sales_by_region;
SHOW MATERIALIZED VIEWS;
