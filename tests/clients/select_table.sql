\set id random(1, 10)
SELECT id, name FROM pgbench_small WHERE id = :id;
