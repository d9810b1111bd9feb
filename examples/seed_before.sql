-- The seed error (RisingWave, src/meta/src/barrier/checkpoint/state.rs):
-- a batch-refresh job created while the database barrier is paused is rejected.
-- Run: psql -X -h 127.0.0.1 -p 4566 -U root -d dev -v ON_ERROR_STOP=1 -f examples/seed_before.sql
-- Expected: fails at the CREATE with SQLSTATE 55000.
CREATE TABLE IF NOT EXISTS seed_orders (id INT, amount INT);
ALTER DATABASE dev PAUSE;
CREATE MATERIALIZED VIEW seed_totals BATCH REFRESH EVERY 5 SECONDS AS
    SELECT count(*) AS orders, sum(amount) AS amount FROM seed_orders;
