-- The README's session: pause, create rejected, resume, create, select.
-- Run (in examples/): psql -X -q -a -h 127.0.0.1 -p 4566 -U root -d dev -f quickstart.sql
CREATE TABLE orders (id INT, region TEXT, amount INT);
INSERT INTO orders VALUES (1, 'eu', 10), (2, 'us', 20), (3, 'eu', 30);
ALTER DATABASE dev PAUSE;
SELECT name, paused, paused_by FROM rw_catalog.rw_databases;
CREATE MATERIALIZED VIEW region_totals WITH (refresh.interval.sec = 5) AS
    SELECT region, sum(amount) AS total FROM orders GROUP BY region;
ALTER DATABASE dev RESUME;
CREATE MATERIALIZED VIEW region_totals WITH (refresh.interval.sec = 5) AS
    SELECT region, sum(amount) AS total FROM orders GROUP BY region;
INSERT INTO orders VALUES (4, 'us', 40);
SELECT region, total FROM region_totals ORDER BY region;
SELECT name, status, refresh_interval_sec FROM rw_catalog.rw_batch_refresh_jobs;
