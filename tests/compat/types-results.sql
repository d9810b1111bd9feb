-- result types, values and column names as PostgreSQL gives them
CREATE TABLE sales (region text, qty integer, big bigint, price numeric(10,2), ratio double precision, sold date, at timestamp);
INSERT INTO sales VALUES ('north', 3, 10, 2.50, 0.5, '2024-01-02', '2024-01-02 03:04:05.5'), ('north', 4, 20, 1.25, 1.5, '2024-02-03', '2024-02-03 10:00:00'), ('south', 7, 5, 9.99, 2.25, '2024-03-04', '2024-03-04 23:59:59.25');
SELECT pg_typeof(sum(1)), pg_typeof(avg(1)), pg_typeof(count(*));
SELECT sum(qty), sum(big), sum(price), avg(qty), avg(big), avg(price), count(*) FROM sales;
SELECT region, sum(qty) AS total, round(avg(price), 2) AS avg_price, stddev(qty), variance(big) FROM sales GROUP BY region ORDER BY region;
SELECT region, avg(qty) FROM sales GROUP BY region ORDER BY 2 DESC;
SELECT 1.0 / 3, 100.0 * 3 / 7, sum(qty) / count(*), sum(big) / count(*) FROM sales;
SELECT region, 100.0 * count(*) / sum(count(*)) OVER () AS share FROM sales GROUP BY region ORDER BY region;
SELECT length(region), char_length(region), position('o' in region), strpos(region, 'th'), upper(region) FROM sales ORDER BY qty;
SELECT array_length(ARRAY[1,2], 1), position('b' in 'abc'), substring('abcdef' from 2 for 3), trim('  x  ');
SELECT extract(year from sold), extract(epoch from at), extract(second from at), date_part('month', sold) FROM sales ORDER BY qty;
SELECT row_number() OVER (ORDER BY qty), rank() OVER (ORDER BY region), ntile(2) OVER (ORDER BY qty), avg(qty) OVER (PARTITION BY region) FROM sales ORDER BY qty;
SELECT qty::numeric, price::numeric(6,1), ratio::numeric, '2.50'::numeric, 12.345::numeric(4,2) FROM sales ORDER BY qty;
SELECT 12.345::numeric(4,2), 1::int, 1::bigint, 'x'::varchar(3), '2024-01-01'::date, true::bool, 1::float8;
SELECT count(*) AS n, max(region) AS last, min(price) FROM sales;
