-- The seed's fix: resume the database, then create the batch-refresh job.
-- Run: psql -X -h 127.0.0.1 -p 4566 -U root -d dev -v ON_ERROR_STOP=1 -f examples/seed_after.sql
ALTER DATABASE dev RESUME;
CREATE MATERIALIZED VIEW seed_totals BATCH REFRESH EVERY 5 SECONDS AS
    SELECT count(*) AS orders, sum(amount) AS amount FROM seed_orders;
SELECT orders, amount FROM seed_totals;
