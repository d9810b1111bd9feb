\set id random(1, 100)
SELECT :id AS id;
