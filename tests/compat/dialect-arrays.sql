-- PostgreSQL's arrays on the DuckDB backend: array text in and out, ||, the array functions
CREATE TABLE arr (id int, a int[], t text[], n numeric(4,1)[], d date[], b boolean[]);
INSERT INTO arr VALUES (1, '{1,2,3}', '{"a,b",NULL,"c\"d","NULL",x y, "e\\f"}', '{1.5,NULL}', '{2020-01-01}', '{t,f,NULL}');
INSERT INTO arr (id, a, t) VALUES (2, '{}', '{}'), (3, '{ 4 , 5 }', '{" sp ",""}');
INSERT INTO arr (id, a) SELECT 4, '{7,8}';
INSERT INTO arr (id, a, t) VALUES (5, NULL, NULL);
SELECT id, a, t, n, d, b FROM arr ORDER BY id;
UPDATE arr SET a = '{9,10}' WHERE a = '{7,8}';
SELECT id, a FROM arr WHERE a = '{9,10}' OR a @> '{4}' OR a && '{1}' ORDER BY id;
SELECT id FROM arr WHERE a IS DISTINCT FROM '{1,2,3}' ORDER BY id;
SELECT id FROM arr WHERE 5 = ANY(a) OR 9 = ANY('{9,10}') AND id = 4 ORDER BY id;
SELECT '{1,2,3}'::int[] AS i, '{{1,2},{3,4}}'::int[] AS m, '{}'::text[] AS e, '{"a b",NULL,c}'::text[] AS t;
SELECT '[1:2]={1,2}'::int[] AS bounds, '  {1}  '::int[] AS blanks, '{"a" , b}'::text[] AS quoted;
SELECT '{1,2'::int[];
SELECT '{1,,2}'::int[];
SELECT '{1,2}x'::int[];
SELECT '{{1,2},{3}}'::int[];
SELECT '{{1,2},3}'::int[];
SELECT 'abc'::int[];
INSERT INTO arr (id, a) VALUES (9, '{1,{2}}');
-- || appends, prepends and concatenates
SELECT ARRAY[1,2] || 3 AS app, 0 || ARRAY[1,2] AS pre, ARRAY[1,2] || ARRAY[3] AS cat,
       ARRAY[[1,2]] || ARRAY[3,4] AS row2, ARRAY[1] || NULL AS n1, ARRAY[1] || NULL::int AS n2,
       ARRAY[1,2] || '{5,6}' AS lit, 'x' || 'y' AS text;
SELECT id, a || 4 AS app, 0 || a AS pre, a || a AS cat, t || 'z'::text AS tz FROM arr WHERE id IN (1, 2) ORDER BY id;
SELECT ARRAY[1,2] || 'x';
-- the array functions
SELECT id, array_length(a, 1) AS len, array_length(a, 2) AS len2, array_upper(a, 1) AS up,
       array_lower(a, 1) AS low, array_ndims(a) AS nd, array_dims(a) AS dims,
       cardinality(a) AS card FROM arr ORDER BY id;
SELECT array_length(ARRAY[[1,2],[3,4],[5,6]], 2) AS l2, array_dims(ARRAY[[1,2],[3,4],[5,6]]) AS d2,
       cardinality(ARRAY[[1,2],[3,4]]) AS c2, array_ndims(ARRAY[[1]]) AS n2;
SELECT array_append(ARRAY[1], 2) AS app, array_prepend(0, ARRAY[1]) AS pre,
       array_cat(ARRAY[1], ARRAY[2,3]) AS cat, array_cat(NULL, ARRAY[1]) AS catnull,
       array_remove(ARRAY[1,2,NULL,2], 2) AS rem, array_remove(ARRAY[1,NULL], NULL) AS remnull,
       array_replace(ARRAY[1,2,NULL], NULL, 9) AS rep;
SELECT array_position(ARRAY['a','b','a'], 'a') AS p, array_position(ARRAY['a','b','a'], 'a', 2) AS p2,
       array_position(ARRAY[1,2], 5) AS none, array_positions(ARRAY[1,2,1], 1) AS ps,
       array_positions(ARRAY[1,NULL], NULL) AS psnull, array_positions(ARRAY[1], 5) AS psnone;
SELECT array_to_string(ARRAY[1,NULL,3], ',') AS s1, array_to_string(ARRAY[1,NULL,3], ',', '*') AS s2,
       array_to_string(ARRAY[true,false], '/') AS bools,
       string_to_array('a,b,,c', ',') AS a1, string_to_array('a,b,x', ',', 'x') AS a2,
       string_to_array('abc', NULL) AS chars, string_to_array('abc', '') AS whole,
       string_to_array('', ',') AS empty;
SELECT id, array_to_string(t, '|', '-') AS joined FROM arr WHERE id = 1;
SELECT unnest(ARRAY[1,2]) AS u, unnest('{a,b}'::text[]) AS v;
SELECT (ARRAY[1,2,3])[2:3] AS s1, (ARRAY[1,2,3])[:2] AS s2, (ARRAY[1,2,3])[2:] AS s3,
       (ARRAY[1,2,3])[5] AS out, (ARRAY[1,2,3])[0] AS zero;
SELECT 2 = ANY(ARRAY[1,2]) AS any1, 3 <> ALL(ARRAY[1,2]) AS all1, 2 = ANY('{1,2}') AS anylit,
       NULL = ANY(ARRAY[1]) AS anynull, 3 = ANY(ARRAY[1,NULL]) AS anyn;
