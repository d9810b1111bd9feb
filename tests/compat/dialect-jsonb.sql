-- PostgreSQL's json / jsonb operators and functions on the DuckDB backend
CREATE TABLE docs (id int, j jsonb, js json, k text, p text[]);
INSERT INTO docs VALUES
  (1, '{"b": [1, 2, {"c": "x"}], "a": 1, "aa": {"x": null}, "a": 2}', '{"b":1,  "a":2}', 'a', '{b,2,c}'),
  (2, '["a", "b", 3, {"k": 1}]', '[1, 2]', 'b', '{3,k}'),
  (3, '"a"', '"a"', 'x', '{}'),
  (4, '7', '7', 'k', '{a}'),
  (5, NULL, NULL, NULL, NULL),
  (6, 'null', 'null', 'a', '{a,NULL}');
SELECT id, j, js FROM docs ORDER BY id;
SELECT '{"b": 1, "a": {"d": [1, 1.50, 1e2], "c": null}}'::jsonb AS jb, '{"b": 1, "a": 2}'::json AS js,
       '[1, "x", true, null]'::jsonb AS arr, '"\u00e9\n"'::jsonb AS str, '1e3'::jsonb AS num;
SELECT id, j -> 'b' AS b, j -> 'a' AS a, j -> 1 AS one, j ->> 'a' AS atext,
       j #> '{b,2}' AS b2, j #>> '{b,2,c}' AS b2c, j #> '{}' AS whole FROM docs ORDER BY id;
SELECT id, j -> -1 AS last, j -> 0 AS first, j ->> 0 AS firsttext FROM docs WHERE id <= 2 ORDER BY id;
SELECT id, j -> k AS byk, j ->> k AS byktext, j #> p AS byp, j #>> p AS byptext FROM docs ORDER BY id;
SELECT id, j #> ARRAY['b', '2', 'c'] AS arrpath, j #> '{b,2,c}'::text[] AS castpath,
       jsonb_extract_path(j, 'b', '2') AS ep, jsonb_extract_path_text(j, 'b', '2', 'c') AS ept,
       json_extract_path_text(js, 'a') AS jept FROM docs ORDER BY id;
SELECT id, j ? 'a' AS has_a, j ? 'b' AS has_b, j ?| ARRAY['x', 'b'] AS any_xb, j ?& ARRAY['a', 'b'] AS all_ab,
       j ?| '{k,z}' AS any_lit, j ?& '{}' AS all_none FROM docs ORDER BY id;
SELECT id, j @> '{"a": 2}' AS c1, j @> '{"b": [1]}' AS c2, j @> '["a"]' AS c3, j @> '"a"' AS c4,
       j @> '{"b": [{"c": "x"}]}' AS c5, '{"a": 2}' <@ j AS c6, j @> '{}' AS c7, j @> '[]' AS c8
  FROM docs ORDER BY id;
SELECT '{"a": {"b": 1}}'::jsonb @> '{"b": 1}' AS nested, '[1, 2, [1, 3]]'::jsonb @> '[1, 3]' AS inner,
       '[1, 2, [1, 3]]'::jsonb @> '[[1, 3]]' AS sub, '{"a": 1}'::jsonb @> '1' AS scalar,
       '[1, 2, 2]'::jsonb @> '[2, 2, 2]' AS dup, '"a"'::jsonb @> '"a"' AS str;
SELECT id, j - 'a' AS minus_a, j - 'b' AS minus_b FROM docs WHERE id IN (1, 2) ORDER BY id;
SELECT '["a", "b", 3]'::jsonb - 1 AS idx, '["a", "b", 3]'::jsonb - -1 AS lastidx,
       '{"a": 1, "b": 2, "c": 3}'::jsonb - ARRAY['a', 'c'] AS keys,
       '{"a": {"b": 1, "c": 2}}'::jsonb #- '{a,b}' AS path, '[1, [2, 3]]'::jsonb #- '{1,0}' AS apath;
SELECT '"a"'::jsonb - 'a';
SELECT '{"a": 1}'::jsonb - 1;
SELECT '{"a": 1, "b": 2}'::jsonb || '{"b": 3, "c": null}' AS objs, '[1, 2]'::jsonb || '[3]' AS arrs,
       '[1]'::jsonb || '2' AS app, '1'::jsonb || '[2]' AS pre, '{"a": 1}'::jsonb || '[2]' AS mixed,
       '1'::jsonb || '2' AS scalars, '{"a": 1}'::jsonb || NULL AS withnull;
SELECT id, j || '{"z": 0}' AS zed FROM docs WHERE id = 1;
SELECT jsonb_set('{"a": 1, "b": {"c": 2}}', '{b,c}', '3') AS s1,
       jsonb_set('{"a": 1}', '{new}', '"v"') AS s2, jsonb_set('{"a": 1}', '{new}', '"v"', false) AS s3,
       jsonb_set('{"a": 1}', '{x,y}', '1') AS s4, jsonb_set('[1, 2, 3]', '{1}', '"two"') AS s5;
SELECT jsonb_insert('{"a": [1, 2]}', '{a,1}', '9') AS i1, jsonb_insert('{"a": [1, 2]}', '{a,1}', '9', true) AS i2,
       jsonb_insert('{"a": 1}', '{b}', '2') AS i3, jsonb_insert('[1, 2]', '{0}', '0') AS i4;
SELECT jsonb_strip_nulls('{"a": null, "b": [null, {"c": null}], "d": 1}') AS stripped,
       jsonb_typeof('{}') AS t1, jsonb_typeof('[]') AS t2, jsonb_typeof('1.5') AS t3, jsonb_typeof('"s"') AS t4,
       jsonb_typeof('true') AS t5, jsonb_typeof('null') AS t6, jsonb_array_length('[1, 2, 3]') AS len;
SELECT jsonb_pretty('{"a": [1, 2], "b": {"c": 1}}') AS pretty;
SELECT jsonb_array_elements('[1, "two", {"three": 3}]') AS e;
SELECT jsonb_array_elements_text('[1, "two", true, null]') AS e;
SELECT jsonb_object_keys('{"b": 1, "a": 2}') AS k;
SELECT e.key, e.value FROM jsonb_each('{"b": 1, "a": "x", "c": null}') AS e ORDER BY e.key;
SELECT e.key, e.value FROM jsonb_each_text('{"a": 1, "b": "x"}') AS e ORDER BY e.key;
SELECT id, e.key FROM docs, jsonb_each(docs.j) AS e WHERE id = 1 ORDER BY e.key;
SELECT jsonb_array_elements('{"a": 1}');
SELECT jsonb_build_object('b', 1, 'a', 'x', 'c', NULL) AS bo, jsonb_build_array(1, 'a', NULL) AS ba,
       to_jsonb('text'::text) AS tj, to_jsonb(2) AS tn;
SELECT jsonb_agg(x ORDER BY x) FILTER (WHERE x > 0) AS agg FROM (VALUES (1), (2)) v(x);
SELECT jsonb_agg(x) AS agg, jsonb_object_agg(k, x) AS oagg FROM (VALUES ('b', 1), ('a', 2)) v(k, x);
SELECT jsonb_agg(x) AS none FROM (VALUES (1)) v(x) WHERE x > 5;
SELECT id FROM docs WHERE j -> 'a' = '2' ORDER BY id;
SELECT id FROM docs WHERE j ->> 'a' = '2' OR j ? 'k' ORDER BY id;
