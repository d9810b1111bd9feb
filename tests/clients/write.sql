\set v random(1, 1000)
BEGIN;
INSERT INTO pgbench_log VALUES (:client_id, :v);
SELECT count(*) FROM pgbench_log WHERE client = :client_id;
END;
