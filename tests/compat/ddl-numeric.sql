-- unconstrained numeric keeps its digits; numeric(p,s) rounds to its scale
CREATE TABLE amounts (id int, n numeric, m numeric(10,2), d decimal);
INSERT INTO amounts VALUES (1, 1.23456, 1.5, 0.0375), (2, 12345678901234567890.5, 2, -7),
    (3, 0.1, 0.125, 100), (4, 0, NULL, NULL);
SELECT id, n, m, d FROM amounts ORDER BY id;
SELECT sum(n), sum(m), sum(d), max(n), min(d) FROM amounts;
SELECT n + d FROM amounts WHERE id = 1;
SELECT 1.50::numeric, '2.50'::numeric, 1.5::numeric * 2, 0.1::numeric + 0.2::numeric;
\d amounts
