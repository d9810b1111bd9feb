-- The emulated PostgreSQL catalog, created once per DuckDB database in an attached in-memory
-- database @C@ (see __init__.py). Every view reads DuckDB's own catalog functions at query
-- time; nothing here holds a copy of user objects. @U@ is the user's DuckDB database.
-- Schemas: pgb (internal helpers), pgcat (pg_catalog), infoschema (information_schema).

-- ------------------------------------------------------------------ helpers (schema pgb)

CREATE MACRO @C@.pgb.hash_oid(kind, nsp, nm) AS
    16384 + (CAST('0x' || substr(md5(kind || ':' || nsp || '.' || nm), 1, 8) AS UBIGINT)
             % 2000000000)::BIGINT;

CREATE MACRO @C@.pgb.reloid(nsp, nm) AS
    coalesce(CASE WHEN nsp = 'pg_catalog' THEN @FIXED_OIDS_CASE@ END,
             @C@.pgb.hash_oid('r', nsp, nm));

CREATE VIEW @C@.pgb.nsps AS
SELECT CASE WHEN schema_name = 'main' THEN 2200 ELSE @C@.pgb.hash_oid('n', '', schema_name) END
           AS oid,
       CASE WHEN schema_name = 'main' THEN 'public' ELSE schema_name END AS nspname,
       database_name AS duck_db, schema_name AS duck_schema,
       CASE WHEN schema_name = 'main' THEN 'standard public schema' ELSE comment END AS comment
FROM duckdb_schemas()
WHERE database_name = '@UNAME@' AND schema_name <> 'pgbarrier'
UNION ALL SELECT 11, 'pg_catalog', '@CNAME@', 'pgcat', 'system catalog schema'
UNION ALL SELECT 13000, 'information_schema', '@CNAME@', 'infoschema', NULL
UNION ALL SELECT @C@.pgb.hash_oid('n', '', 'rw_catalog'), 'rw_catalog', '@CNAME@', 'rw_catalog',
                 'pgbarrier system views'
UNION ALL SELECT @C@.pgb.hash_oid('n', '', 'pg_temp_1'), 'pg_temp_1', 'temp', 'main', NULL;

-- DuckDB's constraints with their PostgreSQL names: the name the client gave the one of its
-- kind and columns (pgbarrier.constraint_names, declared.py), else PostgreSQL's default
-- (DuckDB's foreign-key name adds the referenced columns, its primary key's the columns)
CREATE VIEW @C@.pgb.named_cons AS
SELECT k.*, coalesce(d.constraint_name,
       CASE WHEN k.constraint_type = 'PRIMARY KEY' THEN k.table_name || '_pkey'
            WHEN k.constraint_type = 'FOREIGN KEY'
            THEN k.table_name || '_' || array_to_string(k.constraint_column_names, '_') || '_fkey'
            ELSE k.constraint_name END) AS pg_name,
       d.constraint_name AS given_name,
       -- pgbarrier's own length check of a varchar(n) / char(n) column (duckdb_ddl/lengths.py):
       -- not the client's, never listed as a constraint
       k.constraint_type = 'CHECK' AND contains(k.expression, '@LENGTH_MARKER@') AS hidden
FROM duckdb_constraints() k
LEFT JOIN (SELECT schema_name, table_name, contype, list_sort(column_names) AS cols,
                  min(constraint_name) AS constraint_name
           FROM @U@.pgbarrier.constraint_names GROUP BY ALL) d
       ON k.database_name = '@UNAME@' AND d.schema_name = k.schema_name
      AND d.table_name = k.table_name AND d.cols = list_sort(k.constraint_column_names)
      AND d.contype = CASE k.constraint_type WHEN 'PRIMARY KEY' THEN 'p' WHEN 'UNIQUE' THEN 'u'
                           WHEN 'FOREIGN KEY' THEN 'f' WHEN 'CHECK' THEN 'c' END
WHERE k.constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY', 'CHECK');

-- indexes: the ones PRIMARY KEY and UNIQUE constraints build, and CREATE INDEX ones
CREATE VIEW @C@.pgb.indexes AS
SELECT database_name, schema_name, table_name, pg_name AS index_name,
       constraint_type = 'PRIMARY KEY' AS is_primary, true AS is_unique,
       constraint_column_names AS column_names, constraint_type AS contype_name,
       constraint_column_indexes AS column_indexes
FROM @C@.pgb.named_cons
WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE')
UNION ALL
SELECT x.database_name, x.schema_name, x.table_name, x.index_name, x.is_primary, x.is_unique,
       x.column_names, NULL,
       -- an expression (no column of that name) is -1: attnum 0, as PostgreSQL has it
       (SELECT list(coalesce(c.column_index, 0) - 1 ORDER BY u.pos)
        FROM (SELECT unnest(x.column_names) AS col, generate_subscripts(x.column_names, 1) AS pos) u
        LEFT JOIN duckdb_columns() c ON c.database_name = x.database_name
             AND c.schema_name = x.schema_name AND c.table_name = x.table_name
             AND c.column_name = u.col)
-- DuckDB lists an index's keys as [a, "B", '(lower(q))']: a column's name, or an
-- expression in quotes (its '' doubled) that is already in parentheses, which
-- PostgreSQL's CREATE INDEX takes as it is
FROM (SELECT *, list_transform(
          regexp_extract_all(trim(expressions, '[]'),
                             '''(?:[^'']|'''')*''|"(?:[^"]|"")*"|[^,\s][^,]*'),
          lambda e: CASE WHEN starts_with(e, '''') THEN replace(e[2:-2], '''''', '''')
                         ELSE trim(trim(e), '"') END) AS column_names
      FROM duckdb_indexes()) x;

-- PostgreSQL 15's default btree operator classes (pg_opclass) of the types pgbarrier
-- sends: (oid, opcname, opcfamily, opcintype, opckeytype)
CREATE TABLE @C@.pgb.opclasses AS SELECT * FROM (VALUES
    (10003, 'bool_ops', 424, 16, 0), (10006, 'bytea_ops', 428, 17, 0),
    (10007, 'char_ops', 429, 18, 0), (10028, 'name_ops', 1994, 19, 2275),
    (3124, 'int8_ops', 1976, 20, 0), (1979, 'int2_ops', 1976, 21, 0),
    (1978, 'int4_ops', 1976, 23, 0), (3126, 'text_ops', 1994, 25, 0),
    (1981, 'oid_ops', 1989, 26, 0), (10012, 'float4_ops', 1970, 700, 0),
    (3123, 'float8_ops', 1970, 701, 0), (10004, 'bpchar_ops', 426, 1042, 0),
    (3122, 'date_ops', 434, 1082, 0), (10038, 'time_ops', 1996, 1083, 0),
    (3128, 'timestamp_ops', 434, 1114, 0), (3127, 'timestamptz_ops', 434, 1184, 0),
    (10022, 'interval_ops', 1982, 1186, 0), (10041, 'timetz_ops', 2000, 1266, 0),
    (3125, 'numeric_ops', 1988, 1700, 0), (10000, 'array_ops', 397, 2277, 0),
    (10065, 'uuid_ops', 2968, 2950, 0), (10088, 'jsonb_ops', 4033, 3802, 0))
    AS o(oid, opcname, opcfamily, opcintype, opckeytype);

-- the default btree operator class of a column's DuckDB type (varchar uses text_ops, arrays
-- array_ops); 0 where PostgreSQL has none (json) or for an expression. A constant CASE:
-- pg_index computes it for every index column
CREATE MACRO @C@.pgb.opclass_of(dt) AS
    CASE WHEN dt IS NULL THEN 0 WHEN ends_with(dt, '[]') THEN 10000
         WHEN starts_with(dt, 'DECIMAL') THEN 3125 ELSE @OPCLASS_CASE@ END;

CREATE MACRO @C@.pgb.view_body(sql) AS
    CASE WHEN sql IS NULL THEN NULL
         ELSE rtrim(regexp_replace(sql, '^\s*CREATE\s+(OR\s+REPLACE\s+)?(TEMP(ORARY)?\s+)?VIEW\s+.*?\s+AS\s+', '', 'is'), ';') END;

CREATE MACRO @C@.pgb.indexdef(uniq, idx, nsp, tbl, cols) AS
    'CREATE ' || CASE WHEN uniq THEN 'UNIQUE ' ELSE '' END || 'INDEX ' || idx || ' ON '
    || nsp || '.' || tbl || ' USING btree (' || array_to_string(cols, ', ') || ')';


-- one row per relation: tables, views, materialized views (pgbarrier's marker table says
-- which tables and views are batch-refresh or streaming views) and indexes
CREATE VIEW @C@.pgb.rels AS
WITH objs AS (
    SELECT database_name AS duck_db, schema_name AS duck_schema, table_name AS relname,
           'r' AS kind0, column_count AS relnatts,
           index_count > 0 OR has_primary_key AS relhasindex,
           check_constraint_count - (SELECT count(*) FROM duckdb_constraints() lc
                                     WHERE lc.database_name = t.database_name
                                       AND lc.schema_name = t.schema_name
                                       AND lc.table_name = t.table_name
                                       AND lc.constraint_type = 'CHECK'
                                       AND contains(lc.expression, '@LENGTH_MARKER@'))
               AS relchecks, temporary, comment,
           estimated_size AS reltuples, CAST(NULL AS VARCHAR) AS viewdef,
           CAST(NULL AS VARCHAR) AS indtable,
           -- PostgreSQL enforces foreign keys with triggers on both tables
           fk.tbl IS NOT NULL AS hastriggers
    FROM duckdb_tables() t
    LEFT JOIN (SELECT DISTINCT database_name AS db, schema_name AS sch,
                      unnest([table_name, referenced_table]) AS tbl
               FROM duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY') fk
           ON fk.db = t.database_name AND fk.sch = t.schema_name AND fk.tbl = t.table_name
    UNION ALL
    SELECT database_name, schema_name, view_name, 'v', column_count, false, 0, temporary,
           comment, 0, sql, NULL, false
    FROM duckdb_views() WHERE database_name IN ('@UNAME@', '@CNAME@', 'temp')
    UNION ALL
    SELECT database_name, schema_name, index_name, 'i', len(column_names), false, 0, false,
           NULL, 0, NULL, table_name, false
    FROM @C@.pgb.indexes
    UNION ALL
    SELECT database_name, schema_name, sequence_name, 'S', 3, false, 0, temporary, comment,
           1, NULL, NULL, false
    FROM duckdb_sequences()),
mv AS (SELECT schema_name, relname, kind, definition FROM @U@.pgbarrier.materialized_views)
SELECT @C@.pgb.reloid(n.nspname, o.relname) AS oid, o.relname, n.oid AS relnamespace,
       n.nspname, o.duck_db, o.duck_schema,
       CASE WHEN mv.kind IS NOT NULL THEN 'm' ELSE o.kind0 END AS relkind, o.relnatts,
       o.relhasindex, o.relchecks, o.temporary, o.comment, o.reltuples,
       coalesce(o.viewdef, mv.definition) AS viewdef,
       o.hastriggers,
       CASE WHEN o.indtable IS NOT NULL THEN @C@.pgb.reloid(n.nspname, o.indtable) END
           AS indrelid
FROM objs o
JOIN @C@.pgb.nsps n ON n.duck_db = o.duck_db AND n.duck_schema = o.duck_schema
LEFT JOIN mv ON o.duck_db = '@UNAME@' AND o.duck_schema = mv.schema_name AND o.kind0 <> 'i'
            AND mv.relname = o.relname;

-- a column's type: DuckDB's, or the declared varchar(n) / char(n) / jsonb / timestamp(p) DuckDB forgets
-- (pgbarrier.column_types, declared.py) while DuckDB's type is still the one it is stored as
-- pgb.relcols: every column of a table or view, with its relation's OID as pgb.rels computes
-- it (reloid of the PostgreSQL schema and name) but without pgb.rels (whose indexes and
-- constraints cost ~10 ms to read); relcols_named(names) only those of relations so named
-- (lower case), filtered before anything is computed: RowDescription origins (origins.py)
-- read it on a cache miss
CREATE MACRO @C@.pgb.relcols_named(names) AS TABLE
SELECT @C@.pgb.reloid(n.nspname, c.table_name) AS attrelid, c.column_name AS attname,
       coalesce(d.type_oid, @C@.pgb.type_oid(c.data_type)) AS atttypid,
       CAST(c.column_index AS SMALLINT) AS attnum,
       coalesce(d.typmod,
                CASE WHEN starts_with(c.data_type, 'DECIMAL') AND NOT ends_with(c.data_type, '[]')
                     THEN ((c.numeric_precision << 16) | c.numeric_scale) + 4 ELSE -1 END)::INTEGER
           AS atttypmod,
       NOT c.is_nullable AS attnotnull,
       -- a default as PostgreSQL decompiles it: a string literal PostgreSQL folds to a bare
       -- constant (a non-negative int2 / int4, a decimal fraction, a boolean), else 'x'::text;
       -- the value functions in capitals
       CASE WHEN regexp_full_match(c.column_default, '''[0-9]+''')
                 AND coalesce(d.type_oid, @C@.pgb.type_oid(c.data_type)) IN (21, 23)
                 OR regexp_full_match(c.column_default, '''[0-9]+\.[0-9]+''')
                 AND coalesce(d.type_oid, @C@.pgb.type_oid(c.data_type)) = 1700
                 OR c.column_default IN ('''true''', '''false''')
                 AND coalesce(d.type_oid, @C@.pgb.type_oid(c.data_type)) = 16
            THEN trim(c.column_default, '''')
            WHEN lower(c.column_default) IN ('current_timestamp', 'current_date', 'current_time',
                                              'localtimestamp', 'localtime', 'current_user',
                                              'session_user', 'current_role')
            THEN upper(c.column_default)
            WHEN regexp_full_match(c.column_default, '''([^'']|'''')*''')
            THEN c.column_default || '::' || coalesce(
                 (SELECT t.fmt FROM @C@.pgb.types t
                  WHERE t.oid = coalesce(d.type_oid, @C@.pgb.type_oid(c.data_type))), 'text')
            ELSE c.column_default END AS column_default,
       c.comment, c.data_type,
       n.nspname AS relnspname, c.table_name AS relname, c.database_name = 'temp' AS reltemp,
       c.database_name AS duck_db, c.schema_name AS duck_schema
FROM (SELECT * FROM duckdb_columns()
      WHERE names IS NULL OR list_contains(names, lower(table_name))) c
JOIN @C@.pgb.nsps n ON n.duck_db = c.database_name AND n.duck_schema = c.schema_name
LEFT JOIN @U@.pgbarrier.column_types d
       ON c.database_name = '@UNAME@' AND d.schema_name = c.schema_name
      AND d.table_name = c.table_name AND d.column_name = c.column_name
      AND @DECLARED_STORAGE@;

CREATE VIEW @C@.pgb.relcols AS SELECT * FROM @C@.pgb.relcols_named(NULL);

CREATE VIEW @C@.pgb.cols AS
SELECT b.* EXCLUDE (duck_db, duck_schema), r.relkind,
       -- an identity column's kind (a / d): its sequence default is no default there
       i.generation AS attidentity
FROM @C@.pgb.relcols b
JOIN @C@.pgb.rels r ON r.duck_db = b.duck_db AND r.duck_schema = b.duck_schema
                   AND r.relname = b.relname AND r.relkind <> 'i'
LEFT JOIN @U@.pgbarrier.identity_columns i
       ON b.duck_db = '@UNAME@' AND i.schema_name = b.duck_schema
      AND i.table_name = b.relname AND i.column_name = b.attname
      AND starts_with(b.column_default, 'nextval(');

CREATE VIEW @C@.pgb.cons AS
SELECT @C@.pgb.hash_oid('c', n.nspname, k.table_name || '.' || k.constraint_index) AS oid,
       k.pg_name AS conname,
       n.oid AS connamespace,
       CASE k.constraint_type WHEN 'PRIMARY KEY' THEN 'p' WHEN 'UNIQUE' THEN 'u'
            WHEN 'FOREIGN KEY' THEN 'f' ELSE 'c' END AS contype,
       @C@.pgb.reloid(n.nspname, k.table_name) AS conrelid,
       CASE WHEN k.constraint_type IN ('PRIMARY KEY', 'UNIQUE') THEN @C@.pgb.reloid(n.nspname,
                                                                          k.pg_name)
            -- a foreign key's: the referenced table's index on the referenced columns
            WHEN k.constraint_type = 'FOREIGN KEY' THEN coalesce(
                (SELECT @C@.pgb.reloid(n.nspname, x.index_name) FROM @C@.pgb.indexes x
                 WHERE x.database_name = k.database_name AND x.schema_name = k.schema_name
                   AND x.table_name = k.referenced_table AND x.is_unique
                   AND list_sort(x.column_names) = list_sort(k.referenced_column_names)
                 ORDER BY x.is_primary DESC LIMIT 1), 0)
            ELSE 0 END AS conindid,
       CASE WHEN k.referenced_table IS NOT NULL THEN @C@.pgb.reloid(n.nspname, k.referenced_table)
            ELSE 0 END AS confrelid,
       list_transform(k.constraint_column_indexes, lambda i: CAST(i + 1 AS SMALLINT)) AS conkey,
       CASE WHEN k.referenced_table IS NOT NULL THEN
            (SELECT list(CAST(rc.column_index AS SMALLINT) ORDER BY u.pos)
             FROM (SELECT unnest(k.referenced_column_names) AS col,
                          generate_subscripts(k.referenced_column_names, 1) AS pos) u
             JOIN duckdb_columns() rc ON rc.database_name = k.database_name
                  AND rc.schema_name = k.schema_name AND rc.table_name = k.referenced_table
                  AND rc.column_name = u.col) END AS confkey,
       CASE k.constraint_type
            WHEN 'PRIMARY KEY' THEN 'PRIMARY KEY (' || array_to_string(k.constraint_column_names, ', ') || ')'
            WHEN 'UNIQUE' THEN 'UNIQUE (' || array_to_string(k.constraint_column_names, ', ') || ')'
            WHEN 'FOREIGN KEY' THEN 'FOREIGN KEY (' || array_to_string(k.constraint_column_names, ', ')
                 || ') REFERENCES ' || k.referenced_table || '('
                 || array_to_string(k.referenced_column_names, ', ') || ')'
            -- DuckDB prints a comparison or boolean expression in parentheses already
            ELSE CASE WHEN regexp_full_match(k.expression, '\(.*\)') THEN 'CHECK ' || k.expression
                      ELSE 'CHECK (' || k.expression || ')' END END AS condef,
       k.expression AS conbin,
       -- a foreign key's referenced table is in the constraint's schema (DuckDB's rule)
       CASE WHEN k.referenced_table IS NOT NULL THEN n.nspname END AS refnsp
FROM @C@.pgb.named_cons k
JOIN @C@.pgb.nsps n ON n.duck_db = k.database_name AND n.duck_schema = k.schema_name
WHERE NOT k.hidden;


-- lookups for the macros below: prefixed column names, so that a macro argument written as
-- a bare column (``regtype_name(oid)``) binds to the caller's row, never to these
CREATE VIEW @C@.pgb.k_rels AS
SELECT oid AS k_oid, relname AS k_relname, nspname AS k_nspname, viewdef AS k_viewdef
FROM @C@.pgb.rels;
CREATE VIEW @C@.pgb.k_types AS SELECT oid AS k_oid, typname AS k_typname, fmt AS k_fmt
FROM @C@.pgb.types;
CREATE VIEW @C@.pgb.k_nsps AS SELECT oid AS k_oid, nspname AS k_nspname FROM @C@.pgb.nsps;
CREATE VIEW @C@.pgb.k_cons AS SELECT oid AS k_oid, condef AS k_condef, refnsp AS k_refnsp
FROM @C@.pgb.cons;

-- ------------------------------------------------------------------ pg_catalog (schema pgcat)

CREATE VIEW @C@.pgcat.pg_namespace AS
SELECT CAST(oid AS BIGINT) AS oid, nspname, CAST(10 AS BIGINT) AS nspowner,
       CAST(NULL AS VARCHAR[]) AS nspacl
FROM @C@.pgb.nsps;

CREATE VIEW @C@.pgcat.pg_class AS
SELECT CAST(r.oid AS BIGINT) AS oid, r.relname, CAST(r.relnamespace AS BIGINT) AS relnamespace,
       CAST(0 AS BIGINT) AS reltype, CAST(0 AS BIGINT) AS reloftype,
       CAST(10 AS BIGINT) AS relowner,
       CAST(CASE r.relkind WHEN 'r' THEN 2 WHEN 'm' THEN 2 WHEN 'i' THEN 403 ELSE 0 END AS BIGINT)
           AS relam,
       CAST(r.oid AS BIGINT) AS relfilenode, CAST(0 AS BIGINT) AS reltablespace,
       CAST(0 AS INTEGER) AS relpages, CAST(r.reltuples AS FLOAT) AS reltuples,
       CAST(0 AS INTEGER) AS relallvisible, CAST(0 AS BIGINT) AS reltoastrelid,
       r.relhasindex, false AS relisshared,
       CASE WHEN r.temporary THEN 't' ELSE 'p' END AS relpersistence, r.relkind,
       CAST(r.relnatts AS SMALLINT) AS relnatts, CAST(r.relchecks AS SMALLINT) AS relchecks,
       false AS relhasrules, r.hastriggers AS relhastriggers, false AS relhassubclass,
       false AS relrowsecurity, false AS relforcerowsecurity, true AS relispopulated,
       CASE WHEN r.relkind IN ('r', 'm') THEN 'd' ELSE 'n' END AS relreplident,
       false AS relispartition, CAST(0 AS BIGINT) AS relrewrite,
       CAST(0 AS BIGINT) AS relfrozenxid, CAST(0 AS BIGINT) AS relminmxid,
       CAST(NULL AS VARCHAR[]) AS relacl, CAST(NULL AS VARCHAR[]) AS reloptions,
       CAST(NULL AS VARCHAR) AS relpartbound
FROM @C@.pgb.rels r;

-- pgb.cols once for the table columns and the index columns
CREATE VIEW @C@.pgcat.pg_attribute AS
WITH allcols AS MATERIALIZED (SELECT * FROM @C@.pgb.cols)
-- PostgreSQL 15's column order (DBeaver reads a.* by position and name)
SELECT CAST(a.attrelid AS BIGINT) AS attrelid, a.attname, CAST(a.atttypid AS BIGINT) AS atttypid,
       CAST(-1 AS INTEGER) AS attstattarget, CAST(t.typlen AS SMALLINT) AS attlen, a.attnum,
       CAST(CASE WHEN ends_with(a.data_type, '[]') THEN 1 ELSE 0 END AS INTEGER) AS attndims,
       CAST(-1 AS INTEGER) AS attcacheoff, a.atttypmod,
       t.typlen > 0 AND t.typlen <= 8 AS attbyval, 'i' AS attalign,
       CASE WHEN a.atttypid IN (1700, 1231) THEN 'm' WHEN t.typlen = -1 THEN 'x' ELSE 'p' END
           AS attstorage, '' AS attcompression,
       a.attnotnull, a.column_default IS NOT NULL AND a.attidentity IS NULL AS atthasdef,
       false AS atthasmissing, coalesce(a.attidentity, '') AS attidentity, '' AS attgenerated, false AS attisdropped, true AS attislocal,
       CAST(0 AS INTEGER) AS attinhcount,
       CAST(CASE WHEN a.atttypid IN (25, 1043, 1042, 1009, 1015) THEN 100 ELSE 0 END AS BIGINT)
           AS attcollation,
       CAST(NULL AS VARCHAR[]) AS attacl, CAST(NULL AS VARCHAR[]) AS attoptions,
       CAST(NULL AS VARCHAR[]) AS attfdwoptions, CAST(NULL AS VARCHAR) AS attmissingval
FROM allcols a LEFT JOIN @C@.pgb.types t ON t.oid = a.atttypid
UNION ALL
-- an index's columns: the indexed column's name and type, or "expr" for an expression
SELECT CAST(@C@.pgb.reloid(u.nspname, u.index_name) AS BIGINT), coalesce(c.attname, 'expr'),
       CAST(coalesce(c.atttypid, 25) AS BIGINT), CAST(-1 AS INTEGER),
       CAST(coalesce(t.typlen, -1) AS SMALLINT), CAST(u.pos AS SMALLINT), CAST(0 AS INTEGER),
       CAST(-1 AS INTEGER), coalesce(c.atttypmod, -1), t.typlen > 0 AND t.typlen <= 8, 'i',
       CASE WHEN t.typlen = -1 THEN 'x' ELSE 'p' END, '', false, false, false, '', '', false,
       true, CAST(0 AS INTEGER),
       CAST(CASE WHEN c.atttypid IN (25, 1043, 1042, 1009, 1015) THEN 100 ELSE 0 END AS BIGINT),
       CAST(NULL AS VARCHAR[]), CAST(NULL AS VARCHAR[]), CAST(NULL AS VARCHAR[]),
       CAST(NULL AS VARCHAR)
FROM (SELECT x.*, n.nspname, unnest(x.column_indexes) AS i,
             generate_subscripts(x.column_indexes, 1) AS pos
      FROM @C@.pgb.indexes x
      JOIN @C@.pgb.nsps n ON n.duck_db = x.database_name AND n.duck_schema = x.schema_name) u
LEFT JOIN allcols c ON c.attrelid = @C@.pgb.reloid(u.nspname, u.table_name)
     AND c.attnum = u.i + 1
LEFT JOIN @C@.pgb.types t ON t.oid = c.atttypid
UNION ALL
-- a sequence's columns, as PostgreSQL gives every sequence relation (relnatts 3)
SELECT CAST(r.oid AS BIGINT), s.attname, CAST(s.atttypid AS BIGINT), CAST(-1 AS INTEGER),
       CAST(s.attlen AS SMALLINT), CAST(s.attnum AS SMALLINT), CAST(0 AS INTEGER),
       CAST(-1 AS INTEGER), -1, true, 'i', 'p', '', true, false, false, '', '', false, true,
       CAST(0 AS INTEGER), CAST(0 AS BIGINT), CAST(NULL AS VARCHAR[]), CAST(NULL AS VARCHAR[]),
       CAST(NULL AS VARCHAR[]), CAST(NULL AS VARCHAR)
FROM @C@.pgb.rels r,
     (VALUES ('last_value', 20, 8, 1), ('log_cnt', 20, 8, 2), ('is_called', 16, 1, 3))
         AS s(attname, atttypid, attlen, attnum)
WHERE r.relkind = 'S';

CREATE VIEW @C@.pgcat.pg_attrdef AS
SELECT @C@.pgb.hash_oid('d', CAST(attrelid AS VARCHAR), CAST(attnum AS VARCHAR)) AS oid,
       CAST(attrelid AS BIGINT) AS adrelid, attnum AS adnum, column_default AS adbin
FROM @C@.pgb.cols WHERE column_default IS NOT NULL AND attidentity IS NULL;

CREATE VIEW @C@.pgcat.pg_type AS
SELECT CAST(oid AS BIGINT) AS oid, typname, CAST(11 AS BIGINT) AS typnamespace,
       CAST(10 AS BIGINT) AS typowner, CAST(typlen AS SMALLINT) AS typlen,
       typlen > 0 AND typlen <= 8 AS typbyval, typtype, typcategory, false AS typispreferred,
       true AS typisdefined, ',' AS typdelim, CAST(0 AS BIGINT) AS typrelid,
       CAST(0 AS BIGINT) AS typsubscript, CAST(typelem AS BIGINT) AS typelem,
       CAST(typarray AS BIGINT) AS typarray, typinput, typoutput,
       typname || 'recv' AS typreceive, typname || 'send' AS typsend, '-' AS typmodin,
       '-' AS typmodout, '-' AS typanalyze, 'i' AS typalign,
       -- as pg_attribute.attstorage has it (pg_dump writes SET STORAGE where they differ)
       CASE WHEN oid IN (1700, 1231) THEN 'm' WHEN typlen = -1 THEN 'x' ELSE 'p' END
           AS typstorage,
       false AS typnotnull, CAST(0 AS BIGINT) AS typbasetype, CAST(-1 AS INTEGER) AS typtypmod,
       CAST(0 AS INTEGER) AS typndims,
       CAST(CASE WHEN oid IN (25, 1043, 1042, 19, 1009, 1015, 1014) THEN 100 ELSE 0 END AS BIGINT)
           AS typcollation,
       CAST(NULL AS VARCHAR) AS typdefaultbin, CAST(NULL AS VARCHAR) AS typdefault,
       CAST(NULL AS VARCHAR[]) AS typacl
FROM @C@.pgb.types;

CREATE VIEW @C@.pgcat.pg_index AS
SELECT CAST(@C@.pgb.reloid(n.nspname, x.index_name) AS BIGINT) AS indexrelid,
       CAST(@C@.pgb.reloid(n.nspname, x.table_name) AS BIGINT) AS indrelid,
       CAST(len(x.column_names) AS SMALLINT) AS indnatts,
       CAST(len(x.column_names) AS SMALLINT) AS indnkeyatts,
       x.is_unique AS indisunique, false AS indnullsnotdistinct, x.is_primary AS indisprimary,
       false AS indisexclusion, true AS indimmediate, false AS indisclustered,
       true AS indisvalid, false AS indcheckxmin, true AS indisready, true AS indislive,
       false AS indisreplident,
       list_transform(x.column_indexes, lambda i: CAST(i + 1 AS SMALLINT)) AS indkey,
       -- from the table's column types (a join, no subquery per index)
       list_transform(x.column_indexes, lambda i: CAST(
           CASE WHEN tc.types[i + 1] IN ('VARCHAR', 'VARCHAR[]') THEN 100 ELSE 0 END AS BIGINT))
           AS indcollation,
       list_transform(x.column_indexes,
                      lambda i: CAST(@C@.pgb.opclass_of(tc.types[i + 1]) AS BIGINT)) AS indclass,
       list_transform(x.column_indexes, lambda i: CAST(0 AS SMALLINT)) AS indoption,
       CAST(NULL AS VARCHAR) AS indexprs,
       CAST(NULL AS VARCHAR) AS indpred
FROM @C@.pgb.indexes x
JOIN @C@.pgb.nsps n ON n.duck_db = x.database_name AND n.duck_schema = x.schema_name
LEFT JOIN (SELECT database_name, schema_name, table_name,
                  list(data_type ORDER BY column_index) AS types
           FROM duckdb_columns() GROUP BY ALL) tc
       ON tc.database_name = x.database_name AND tc.schema_name = x.schema_name
      AND tc.table_name = x.table_name;

CREATE VIEW @C@.pgcat.pg_constraint AS
SELECT CAST(oid AS BIGINT) AS oid, conname, CAST(connamespace AS BIGINT) AS connamespace,
       contype, false AS condeferrable, false AS condeferred, true AS convalidated,
       CAST(conrelid AS BIGINT) AS conrelid, CAST(0 AS BIGINT) AS contypid,
       CAST(conindid AS BIGINT) AS conindid, CAST(0 AS BIGINT) AS conparentid,
       CAST(confrelid AS BIGINT) AS confrelid,
       CASE WHEN contype = 'f' THEN 'a' ELSE ' ' END AS confupdtype,
       CASE WHEN contype = 'f' THEN 'a' ELSE ' ' END AS confdeltype,
       CASE WHEN contype = 'f' THEN 's' ELSE ' ' END AS confmatchtype,
       true AS conislocal, CAST(0 AS INTEGER) AS coninhcount, false AS connoinherit,
       conkey, confkey, CAST(NULL AS BIGINT[]) AS conpfeqop, CAST(NULL AS BIGINT[]) AS conppeqop,
       CAST(NULL AS BIGINT[]) AS conffeqop, CAST(NULL AS SMALLINT[]) AS confdelsetcols,
       CAST(NULL AS BIGINT[]) AS conexclop, conbin
FROM @C@.pgb.cons;

CREATE VIEW @C@.pgcat.pg_description AS
SELECT CAST(r.oid AS BIGINT) AS objoid, CAST(1259 AS BIGINT) AS classoid,
       CAST(0 AS INTEGER) AS objsubid, r.comment AS description
FROM @C@.pgb.rels r WHERE r.comment IS NOT NULL
UNION ALL
SELECT CAST(c.attrelid AS BIGINT), CAST(1259 AS BIGINT), CAST(c.attnum AS INTEGER), c.comment
FROM @C@.pgb.cols c WHERE c.comment IS NOT NULL
UNION ALL
SELECT CAST(n.oid AS BIGINT), CAST(2615 AS BIGINT), CAST(0 AS INTEGER), n.comment
FROM @C@.pgb.nsps n WHERE n.comment IS NOT NULL
UNION ALL
SELECT l.oid, CAST(2612 AS BIGINT), CAST(0 AS INTEGER), l.description FROM @C@.pgb.languages l
UNION ALL
SELECT CAST(13500 AS BIGINT), CAST(3079 AS BIGINT), CAST(0 AS INTEGER),
       'PL/pgSQL procedural language';

CREATE VIEW @C@.pgcat.pg_opclass AS
SELECT CAST(oid AS BIGINT) AS oid, CAST(403 AS BIGINT) AS opcmethod, opcname,
       CAST(11 AS BIGINT) AS opcnamespace, CAST(10 AS BIGINT) AS opcowner,
       CAST(opcfamily AS BIGINT) AS opcfamily, CAST(opcintype AS BIGINT) AS opcintype,
       true AS opcdefault, CAST(opckeytype AS BIGINT) AS opckeytype
FROM @C@.pgb.opclasses;

CREATE VIEW @C@.pgcat.pg_am AS
SELECT * FROM (VALUES (CAST(2 AS BIGINT), 'heap', 'heap_tableam_handler', 't'),
                      (CAST(403 AS BIGINT), 'btree', 'bthandler', 'i'))
    AS am(oid, amname, amhandler, amtype);

CREATE VIEW @C@.pgcat.pg_collation AS
SELECT * FROM (VALUES (CAST(100 AS BIGINT), 'default', CAST(11 AS BIGINT), CAST(10 AS BIGINT),
                       'd', true, CAST(-1 AS INTEGER), CAST(NULL AS VARCHAR),
                       CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR)))
    AS c(oid, collname, collnamespace, collowner, collprovider, collisdeterministic,
         collencoding, collcollate, collctype, colliculocale, collversion);

CREATE VIEW @C@.pgcat.pg_inherits AS
SELECT CAST(NULL AS BIGINT) AS inhrelid, CAST(NULL AS BIGINT) AS inhparent,
       CAST(NULL AS INTEGER) AS inhseqno, CAST(NULL AS BOOLEAN) AS inhdetachpending WHERE false;

CREATE VIEW @C@.pgcat.pg_policy AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS polname,
       CAST(NULL AS BIGINT) AS polrelid, CAST(NULL AS VARCHAR) AS polcmd,
       CAST(NULL AS BOOLEAN) AS polpermissive, CAST(NULL AS BIGINT[]) AS polroles,
       CAST(NULL AS VARCHAR) AS polqual, CAST(NULL AS VARCHAR) AS polwithcheck WHERE false;

CREATE VIEW @C@.pgcat.pg_statistic_ext AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS stxrelid,
       CAST(NULL AS VARCHAR) AS stxname, CAST(NULL AS BIGINT) AS stxnamespace,
       CAST(NULL AS BIGINT) AS stxowner, CAST(NULL AS INTEGER) AS stxstattarget,
       CAST(NULL AS SMALLINT[]) AS stxkeys, CAST(NULL AS VARCHAR[]) AS stxkind,
       CAST(NULL AS VARCHAR) AS stxexprs WHERE false;

CREATE VIEW @C@.pgcat.pg_publication AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS pubname,
       CAST(NULL AS BIGINT) AS pubowner, CAST(NULL AS BOOLEAN) AS puballtables,
       CAST(NULL AS BOOLEAN) AS pubinsert, CAST(NULL AS BOOLEAN) AS pubupdate,
       CAST(NULL AS BOOLEAN) AS pubdelete, CAST(NULL AS BOOLEAN) AS pubtruncate,
       CAST(NULL AS BOOLEAN) AS pubviaroot WHERE false;

CREATE VIEW @C@.pgcat.pg_publication_namespace AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS pnpubid,
       CAST(NULL AS BIGINT) AS pnnspid WHERE false;

CREATE VIEW @C@.pgcat.pg_publication_rel AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS prpubid,
       CAST(NULL AS BIGINT) AS prrelid, CAST(NULL AS VARCHAR) AS prqual,
       CAST(NULL AS SMALLINT[]) AS prattrs WHERE false;

CREATE VIEW @C@.pgcat.pg_enum AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS enumtypid,
       CAST(NULL AS FLOAT) AS enumsortorder, CAST(NULL AS VARCHAR) AS enumlabel WHERE false;

CREATE VIEW @C@.pgcat.pg_extension AS
SELECT CAST(13500 AS BIGINT) AS oid, 'plpgsql' AS extname, CAST(10 AS BIGINT) AS extowner,
       CAST(11 AS BIGINT) AS extnamespace, false AS extrelocatable, '1.0' AS extversion,
       CAST(NULL AS BIGINT[]) AS extconfig, CAST(NULL AS VARCHAR[]) AS extcondition;

-- the extensions there are: the installed ones (plpgsql), nothing more can be installed
CREATE VIEW @C@.pgcat.pg_available_extensions AS
SELECT e.extname AS name, e.extversion AS default_version, e.extversion AS installed_version,
       d.description AS comment
FROM @C@.pgcat.pg_extension e
LEFT JOIN @C@.pgcat.pg_description d ON d.objoid = e.oid AND d.classoid = 3079;

CREATE VIEW @C@.pgcat.pg_replication_slots AS
SELECT CAST(NULL AS VARCHAR) AS slot_name, CAST(NULL AS VARCHAR) AS plugin,
       CAST(NULL AS VARCHAR) AS slot_type, CAST(NULL AS BIGINT) AS datoid,
       CAST(NULL AS VARCHAR) AS database, CAST(NULL AS BOOLEAN) AS temporary,
       CAST(NULL AS BOOLEAN) AS active WHERE false;

-- what pg_dump orders its objects by: a view (or materialized view) on every relation of
-- its database whose name is a word of its query (DuckDB keeps no dependencies of a view;
-- a name in a string literal makes one too many, which only orders the dump), a serial
-- column's sequence owned by the column (pgbarrier names it <table>_<column>_seq) and
-- the column's default on its sequence, and pgbarrier's rw_catalog schema and views as
-- members of the one built-in extension, plpgsql (OID below 16384: pg_dump leaves it and
-- its members out, as it does PostgreSQL's own objects; an extension of pgbarrier's own
-- would change psql's \dx, which matches PostgreSQL's)
CREATE VIEW @C@.pgcat.pg_depend AS
WITH seqdefs AS (
    SELECT c.attrelid, c.attnum, r.nspname, c.attidentity,
           (SELECT t.relname FROM @C@.pgb.rels t WHERE t.oid = c.attrelid) AS tblname,
           regexp_extract(c.column_default, 'nextval\(''(?:[^''.]+\.)?([^''.]+)''\)', 1) AS seqname
    FROM @C@.pgb.cols c JOIN @C@.pgb.rels r ON r.oid = c.attrelid
    WHERE regexp_full_match(c.column_default, 'nextval\(''[^'']+''\)'))
SELECT CAST(1259 AS BIGINT) AS classid, CAST(v.oid AS BIGINT) AS objid,
       CAST(0 AS INTEGER) AS objsubid, CAST(1259 AS BIGINT) AS refclassid,
       CAST(r.oid AS BIGINT) AS refobjid, CAST(0 AS INTEGER) AS refobjsubid, 'n' AS deptype
FROM @C@.pgb.rels v JOIN @C@.pgb.rels r
     ON r.duck_db = v.duck_db AND r.oid <> v.oid AND r.relkind IN ('r', 'v', 'm')
    AND regexp_matches(v.viewdef, '(^|[^A-Za-z0-9_$])' || r.relname || '($|[^A-Za-z0-9_$])', 'i')
WHERE v.relkind IN ('v', 'm') AND v.viewdef IS NOT NULL AND v.duck_db = '@UNAME@'
UNION ALL
-- a serial's sequence is owned by its column (auto), an identity's is part of it (internal)
SELECT 1259, s.oid, 0, 1259, d.attrelid, CAST(d.attnum AS INTEGER),
       CASE WHEN d.attidentity IS NULL THEN 'a' ELSE 'i' END
FROM seqdefs d JOIN @C@.pgb.rels s ON s.relkind = 'S' AND s.nspname = d.nspname
     AND s.relname = d.seqname AND d.seqname = d.tblname || '_' ||
         (SELECT c.attname FROM @C@.pgb.cols c WHERE c.attrelid = d.attrelid
            AND c.attnum = d.attnum) || '_seq'
UNION ALL
SELECT 2604, @C@.pgb.hash_oid('d', CAST(d.attrelid AS VARCHAR), CAST(d.attnum AS VARCHAR)), 0,
       1259, s.oid, 0, 'n'
FROM seqdefs d JOIN @C@.pgb.rels s ON s.relkind = 'S' AND s.nspname = d.nspname
     AND s.relname = d.seqname AND d.attidentity IS NULL
UNION ALL
SELECT 2615, n.oid, 0, 3079, 13500, 0, 'e' FROM @C@.pgb.nsps n WHERE n.nspname = 'rw_catalog'
UNION ALL
SELECT 1259, r.oid, 0, 3079, 13500, 0, 'e' FROM @C@.pgb.rels r WHERE r.nspname = 'rw_catalog';

-- the functions of PostgreSQL's built-in casts (builtins.py): what \dC names
CREATE VIEW @C@.pgcat.pg_proc AS
SELECT CAST(p.oid AS BIGINT) AS oid, p.proname, CAST(11 AS BIGINT) AS pronamespace,
       CAST(10 AS BIGINT) AS proowner, CAST(12 AS BIGINT) AS prolang,
       CAST(1 AS FLOAT) AS procost, CAST(0 AS FLOAT) AS prorows,
       CAST(0 AS BIGINT) AS provariadic, '-' AS prosupport, 'f' AS prokind,
       false AS prosecdef, false AS proleakproof, true AS proisstrict, false AS proretset,
       'i' AS provolatile, 's' AS proparallel, CAST(len(p.proargtypes) AS SMALLINT) AS pronargs,
       CAST(0 AS SMALLINT) AS pronargdefaults, CAST(p.prorettype AS BIGINT) AS prorettype,
       p.proargtypes, CAST(NULL AS BIGINT[]) AS proallargtypes,
       CAST(NULL AS VARCHAR[]) AS proargmodes, CAST(NULL AS VARCHAR[]) AS proargnames,
       CAST(NULL AS VARCHAR) AS proargdefaults, CAST(NULL AS BIGINT[]) AS protrftypes,
       p.proname AS prosrc, CAST(NULL AS VARCHAR) AS probin,
       CAST(NULL AS VARCHAR) AS prosqlbody, CAST(NULL AS VARCHAR[]) AS proconfig,
       CAST(NULL AS VARCHAR[]) AS proacl
FROM @C@.pgb.procs p;

CREATE VIEW @C@.pgcat.pg_cast AS
-- built-in OIDs (below 16384, as PostgreSQL's own casts have: pg_dump leaves them out)
SELECT CAST(10000 + row_number() OVER (ORDER BY castsource, casttarget) AS BIGINT) AS oid,
       castsource, casttarget, castfunc, castcontext, castmethod
FROM @C@.pgb.casts;

CREATE VIEW @C@.pgcat.pg_language AS
SELECT oid, lanname, CAST(10 AS BIGINT) AS lanowner, lanispl, lanpltrusted, lanplcallfoid,
       laninline, lanvalidator, CAST(NULL AS VARCHAR[]) AS lanacl
FROM @C@.pgb.languages;

-- no operators of pgbarrier's own; PostgreSQL's built-in ones are not listed (\do lists
-- those of other schemas than pg_catalog only)
CREATE VIEW @C@.pgcat.pg_operator AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS oprname,
       CAST(NULL AS BIGINT) AS oprnamespace, CAST(NULL AS BIGINT) AS oprowner,
       CAST(NULL AS VARCHAR) AS oprkind, CAST(NULL AS BOOLEAN) AS oprcanmerge,
       CAST(NULL AS BOOLEAN) AS oprcanhash, CAST(NULL AS BIGINT) AS oprleft,
       CAST(NULL AS BIGINT) AS oprright, CAST(NULL AS BIGINT) AS oprresult,
       CAST(NULL AS BIGINT) AS oprcom, CAST(NULL AS BIGINT) AS oprnegate,
       CAST(NULL AS VARCHAR) AS oprcode, CAST(NULL AS VARCHAR) AS oprrest,
       CAST(NULL AS VARCHAR) AS oprjoin WHERE false;

-- the btree operator families of pgb.opclasses
CREATE VIEW @C@.pgcat.pg_opfamily AS
SELECT CAST(oid AS BIGINT) AS oid, CAST(403 AS BIGINT) AS opfmethod, opfname,
       CAST(11 AS BIGINT) AS opfnamespace, CAST(10 AS BIGINT) AS opfowner
FROM (VALUES (397, 'array_ops'), (424, 'bool_ops'), (426, 'bpchar_ops'), (428, 'bytea_ops'),
             (429, 'char_ops'), (434, 'datetime_ops'), (1970, 'float_ops'),
             (1976, 'integer_ops'), (1982, 'interval_ops'), (1988, 'numeric_ops'),
             (1989, 'oid_ops'), (1994, 'text_ops'), (1996, 'time_ops'), (2000, 'timetz_ops'),
             (2968, 'uuid_ops'), (4033, 'jsonb_ops')) AS f(oid, opfname);

-- objects DuckDB has none of: event triggers, foreign servers and wrappers, conversions,
-- per-role settings, default privileges
CREATE VIEW @C@.pgcat.pg_event_trigger AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS evtname,
       CAST(NULL AS VARCHAR) AS evtevent, CAST(NULL AS BIGINT) AS evtowner,
       CAST(NULL AS BIGINT) AS evtfoid, CAST(NULL AS VARCHAR) AS evtenabled,
       CAST(NULL AS VARCHAR[]) AS evttags WHERE false;
CREATE VIEW @C@.pgcat.pg_foreign_data_wrapper AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS fdwname,
       CAST(NULL AS BIGINT) AS fdwowner, CAST(NULL AS BIGINT) AS fdwhandler,
       CAST(NULL AS BIGINT) AS fdwvalidator, CAST(NULL AS VARCHAR[]) AS fdwacl,
       CAST(NULL AS VARCHAR[]) AS fdwoptions WHERE false;
CREATE VIEW @C@.pgcat.pg_foreign_server AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS srvname,
       CAST(NULL AS BIGINT) AS srvowner, CAST(NULL AS BIGINT) AS srvfdw,
       CAST(NULL AS VARCHAR) AS srvtype, CAST(NULL AS VARCHAR) AS srvversion,
       CAST(NULL AS VARCHAR[]) AS srvacl, CAST(NULL AS VARCHAR[]) AS srvoptions WHERE false;
CREATE VIEW @C@.pgcat.pg_conversion AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS conname,
       CAST(NULL AS BIGINT) AS connamespace, CAST(NULL AS BIGINT) AS conowner,
       CAST(NULL AS INTEGER) AS conforencoding, CAST(NULL AS INTEGER) AS contoencoding,
       CAST(NULL AS VARCHAR) AS conproc, CAST(NULL AS BOOLEAN) AS condefault WHERE false;
CREATE VIEW @C@.pgcat.pg_db_role_setting AS
SELECT CAST(NULL AS BIGINT) AS setdatabase, CAST(NULL AS BIGINT) AS setrole,
       CAST(NULL AS VARCHAR[]) AS setconfig WHERE false;
CREATE VIEW @C@.pgcat.pg_default_acl AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS defaclrole,
       CAST(NULL AS BIGINT) AS defaclnamespace, CAST(NULL AS VARCHAR) AS defaclobjtype,
       CAST(NULL AS VARCHAR[]) AS defaclacl WHERE false;

CREATE VIEW @C@.pgcat.pg_subscription AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS subdbid,
       CAST(NULL AS VARCHAR) AS subskiplsn, CAST(NULL AS VARCHAR) AS subname,
       CAST(NULL AS BIGINT) AS subowner, CAST(NULL AS BOOLEAN) AS subenabled,
       CAST(NULL AS BOOLEAN) AS subbinary, CAST(NULL AS BOOLEAN) AS substream,
       CAST(NULL AS VARCHAR) AS subtwophasestate, CAST(NULL AS BOOLEAN) AS subdisableonerr,
       CAST(NULL AS VARCHAR) AS subconninfo, CAST(NULL AS VARCHAR) AS subslotname,
       CAST(NULL AS VARCHAR) AS subsynccommit, CAST(NULL AS VARCHAR[]) AS subpublications
WHERE false;

-- catalogs pg_dump reads that have no rows on DuckDB (no foreign tables, text search
-- objects, ranges, transforms, partitions, large objects, operator families' members,
-- security labels or initial privileges)
CREATE VIEW @C@.pgcat.pg_foreign_table AS
SELECT CAST(NULL AS BIGINT) AS ftrelid, CAST(NULL AS BIGINT) AS ftserver,
       CAST(NULL AS VARCHAR[]) AS ftoptions WHERE false;
CREATE VIEW @C@.pgcat.pg_init_privs AS
SELECT CAST(NULL AS BIGINT) AS objoid, CAST(NULL AS BIGINT) AS classoid,
       CAST(NULL AS INTEGER) AS objsubid, CAST(NULL AS VARCHAR) AS privtype,
       CAST(NULL AS VARCHAR[]) AS initprivs WHERE false;
CREATE VIEW @C@.pgcat.pg_ts_parser AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS prsname,
       CAST(NULL AS BIGINT) AS prsnamespace, CAST(NULL AS VARCHAR) AS prsstart,
       CAST(NULL AS VARCHAR) AS prstoken, CAST(NULL AS VARCHAR) AS prsend,
       CAST(NULL AS VARCHAR) AS prsheadline, CAST(NULL AS VARCHAR) AS prslextype WHERE false;
CREATE VIEW @C@.pgcat.pg_ts_template AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS tmplname,
       CAST(NULL AS BIGINT) AS tmplnamespace, CAST(NULL AS VARCHAR) AS tmplinit,
       CAST(NULL AS VARCHAR) AS tmpllexize WHERE false;
CREATE VIEW @C@.pgcat.pg_ts_dict AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS dictname,
       CAST(NULL AS BIGINT) AS dictnamespace, CAST(NULL AS BIGINT) AS dictowner,
       CAST(NULL AS BIGINT) AS dicttemplate, CAST(NULL AS VARCHAR) AS dictinitoption WHERE false;
CREATE VIEW @C@.pgcat.pg_ts_config AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS cfgname,
       CAST(NULL AS BIGINT) AS cfgnamespace, CAST(NULL AS BIGINT) AS cfgowner,
       CAST(NULL AS BIGINT) AS cfgparser WHERE false;
CREATE VIEW @C@.pgcat.pg_range AS
SELECT CAST(NULL AS BIGINT) AS rngtypid, CAST(NULL AS BIGINT) AS rngsubtype,
       CAST(NULL AS BIGINT) AS rngmultitypid, CAST(NULL AS BIGINT) AS rngcollation,
       CAST(NULL AS BIGINT) AS rngsubopc, CAST(NULL AS VARCHAR) AS rngcanonical,
       CAST(NULL AS VARCHAR) AS rngsubdiff WHERE false;
CREATE VIEW @C@.pgcat.pg_transform AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS trftype,
       CAST(NULL AS BIGINT) AS trflang, CAST(NULL AS VARCHAR) AS trffromsql,
       CAST(NULL AS VARCHAR) AS trftosql WHERE false;
CREATE VIEW @C@.pgcat.pg_partitioned_table AS
SELECT CAST(NULL AS BIGINT) AS partrelid, CAST(NULL AS VARCHAR) AS partstrat,
       CAST(NULL AS SMALLINT) AS partnatts, CAST(NULL AS BIGINT) AS partdefid,
       CAST(NULL AS SMALLINT[]) AS partattrs, CAST(NULL AS BIGINT[]) AS partclass,
       CAST(NULL AS BIGINT[]) AS partcollation, CAST(NULL AS VARCHAR) AS partexprs WHERE false;
CREATE VIEW @C@.pgcat.pg_largeobject_metadata AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS lomowner,
       CAST(NULL AS VARCHAR[]) AS lomacl WHERE false;
CREATE VIEW @C@.pgcat.pg_amop AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS amopfamily,
       CAST(NULL AS BIGINT) AS amoplefttype, CAST(NULL AS BIGINT) AS amoprighttype,
       CAST(NULL AS SMALLINT) AS amopstrategy, CAST(NULL AS VARCHAR) AS amoppurpose,
       CAST(NULL AS BIGINT) AS amopopr, CAST(NULL AS BIGINT) AS amopmethod,
       CAST(NULL AS BIGINT) AS amopsortfamily WHERE false;
CREATE VIEW @C@.pgcat.pg_amproc AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS amprocfamily,
       CAST(NULL AS BIGINT) AS amproclefttype, CAST(NULL AS BIGINT) AS amprocrighttype,
       CAST(NULL AS SMALLINT) AS amprocnum, CAST(NULL AS VARCHAR) AS amproc WHERE false;
CREATE VIEW @C@.pgcat.pg_seclabel AS
SELECT CAST(NULL AS BIGINT) AS objoid, CAST(NULL AS BIGINT) AS classoid,
       CAST(NULL AS INTEGER) AS objsubid, CAST(NULL AS VARCHAR) AS provider,
       CAST(NULL AS VARCHAR) AS label WHERE false;
CREATE VIEW @C@.pgcat.pg_seclabels AS
SELECT CAST(NULL AS BIGINT) AS objoid, CAST(NULL AS BIGINT) AS classoid,
       CAST(NULL AS INTEGER) AS objsubid, CAST(NULL AS VARCHAR) AS objtype,
       CAST(NULL AS BIGINT) AS objnamespace, CAST(NULL AS VARCHAR) AS objname,
       CAST(NULL AS VARCHAR) AS provider, CAST(NULL AS VARCHAR) AS label WHERE false;
CREATE VIEW @C@.pgcat.pg_shseclabel AS
SELECT CAST(NULL AS BIGINT) AS objoid, CAST(NULL AS BIGINT) AS classoid,
       CAST(NULL AS VARCHAR) AS provider, CAST(NULL AS VARCHAR) AS label WHERE false;
-- no privileges are kept: every ACL is NULL, so is the default one
CREATE MACRO @C@.pgcat.acldefault(objtype, ownerid) AS CAST(NULL AS VARCHAR[]);
-- options lists are always NULL here: no rows
CREATE MACRO @C@.pgcat.pg_options_to_table(opts) AS TABLE
    SELECT CAST(NULL AS VARCHAR) AS option_name, CAST(NULL AS VARCHAR) AS option_value WHERE false;

CREATE VIEW @C@.pgcat.pg_rewrite AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS rulename,
       CAST(NULL AS BIGINT) AS ev_class, CAST(NULL AS VARCHAR) AS ev_type,
       CAST(NULL AS VARCHAR) AS ev_enabled, CAST(NULL AS BOOLEAN) AS is_instead,
       CAST(NULL AS VARCHAR) AS ev_qual, CAST(NULL AS VARCHAR) AS ev_action WHERE false;

-- no rules are listed (a view's _RETURN rule included), so there is none to decompile
CREATE MACRO @C@.pgcat.pg_get_ruledef(ruleoid) AS CAST(NULL AS VARCHAR),
             (ruleoid, pretty) AS CAST(NULL AS VARCHAR);

-- no comments on databases, roles or tablespaces are kept
CREATE VIEW @C@.pgcat.pg_shdescription AS
SELECT CAST(NULL AS BIGINT) AS objoid, CAST(NULL AS BIGINT) AS classoid,
       CAST(NULL AS VARCHAR) AS description WHERE false;

-- pg_proc is empty, so are the aggregates (PostgreSQL 15's columns)
CREATE VIEW @C@.pgcat.pg_aggregate AS
SELECT CAST(NULL AS VARCHAR) AS aggfnoid, CAST(NULL AS VARCHAR) AS aggkind,
       CAST(NULL AS SMALLINT) AS aggnumdirectargs, CAST(NULL AS VARCHAR) AS aggtransfn,
       CAST(NULL AS VARCHAR) AS aggfinalfn, CAST(NULL AS VARCHAR) AS aggcombinefn,
       CAST(NULL AS VARCHAR) AS aggserialfn, CAST(NULL AS VARCHAR) AS aggdeserialfn,
       CAST(NULL AS VARCHAR) AS aggmtransfn, CAST(NULL AS VARCHAR) AS aggminvtransfn,
       CAST(NULL AS VARCHAR) AS aggmfinalfn, CAST(NULL AS BOOLEAN) AS aggfinalextra,
       CAST(NULL AS BOOLEAN) AS aggmfinalextra, CAST(NULL AS VARCHAR) AS aggfinalmodify,
       CAST(NULL AS VARCHAR) AS aggmfinalmodify, CAST(NULL AS BIGINT) AS aggsortop,
       CAST(NULL AS BIGINT) AS aggtranstype, CAST(NULL AS INTEGER) AS aggtransspace,
       CAST(NULL AS BIGINT) AS aggmtranstype, CAST(NULL AS INTEGER) AS aggmtransspace,
       CAST(NULL AS VARCHAR) AS agginitval, CAST(NULL AS VARCHAR) AS aggminitval WHERE false;

CREATE VIEW @C@.pgcat.pg_auth_members AS
SELECT CAST(NULL AS BIGINT) AS roleid, CAST(NULL AS BIGINT) AS member,
       CAST(NULL AS BIGINT) AS grantor, CAST(NULL AS BOOLEAN) AS admin_option WHERE false;

CREATE VIEW @C@.pgcat.pg_tablespace AS
SELECT * FROM (VALUES (CAST(1663 AS BIGINT), 'pg_default', CAST(10 AS BIGINT),
                       CAST(NULL AS VARCHAR[]), CAST(NULL AS VARCHAR[])))
    AS t(oid, spcname, spcowner, spcacl, spcoptions);

-- no user triggers (DuckDB has none); the internal ones PostgreSQL's foreign keys use are
-- not listed (psql hides them)
CREATE VIEW @C@.pgcat.pg_trigger AS
SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS BIGINT) AS tgrelid,
       CAST(NULL AS BIGINT) AS tgparentid,
       CAST(NULL AS VARCHAR) AS tgname, CAST(NULL AS BIGINT) AS tgfoid,
       CAST(NULL AS SMALLINT) AS tgtype, CAST(NULL AS VARCHAR) AS tgenabled,
       CAST(NULL AS BOOLEAN) AS tgisinternal, CAST(NULL AS BIGINT) AS tgconstrrelid,
       CAST(NULL AS BIGINT) AS tgconstrindid, CAST(NULL AS BIGINT) AS tgconstraint,
       CAST(NULL AS BOOLEAN) AS tgdeferrable, CAST(NULL AS BOOLEAN) AS tginitdeferred,
       CAST(NULL AS SMALLINT) AS tgnargs, CAST(NULL AS SMALLINT[]) AS tgattr,
       CAST(NULL AS BLOB) AS tgargs, CAST(NULL AS VARCHAR) AS tgqual,
       CAST(NULL AS VARCHAR) AS tgoldtable, CAST(NULL AS VARCHAR) AS tgnewtable WHERE false;
CREATE MACRO @C@.pgcat.pg_get_triggerdef(trigoid) AS CAST(NULL AS VARCHAR),
    (trigoid, pretty) AS CAST(NULL AS VARCHAR);

-- DuckDB's sequences are bigint; a serial / smallserial column's own is of the column's
-- type, as PostgreSQL makes it (its maximum capped to the type's)
CREATE VIEW @C@.pgcat.pg_sequence AS
WITH seqs AS (
    SELECT CAST(@C@.pgb.reloid(n.nspname, s.sequence_name) AS BIGINT) AS seqrelid, s.*
    FROM duckdb_sequences() s
    JOIN @C@.pgb.nsps n ON n.duck_db = s.database_name AND n.duck_schema = s.schema_name),
-- the type of the serial / identity column whose default reads the sequence (read from
-- the defaults, not through pg_depend: SQLAlchemy reads this per identity column)
owners AS (
    SELECT regexp_extract(c.column_default, 'nextval\(''(?:[^''.]+\.)?([^''.]+)''\)', 1)
               AS seqname, min(c.atttypid) AS atttypid
    FROM @C@.pgb.cols c
    WHERE c.atttypid IN (21, 23) AND starts_with(c.column_default, 'nextval(')
    GROUP BY 1),
typed AS (
    SELECT s.*, coalesce(o.atttypid, 20) AS typid
    FROM seqs s LEFT JOIN owners o ON o.seqname = s.sequence_name)
SELECT seqrelid, CAST(typid AS BIGINT) AS seqtypid, start_value AS seqstart,
       increment_by AS seqincrement,
       CASE typid WHEN 23 THEN least(max_value, 2147483647) WHEN 21 THEN least(max_value, 32767)
                  ELSE max_value END AS seqmax,
       min_value AS seqmin, CAST(1 AS BIGINT) AS seqcache, cycle AS seqcycle
FROM typed;

CREATE VIEW @C@.pgcat.pg_tables AS
SELECT r.nspname AS schemaname, r.relname AS tablename, getvariable('pgbarrier_user') AS tableowner,
       CAST(NULL AS VARCHAR) AS tablespace, r.relhasindex AS hasindexes, false AS hasrules,
       r.hastriggers, false AS rowsecurity
FROM @C@.pgb.rels r WHERE r.relkind = 'r';

CREATE VIEW @C@.pgcat.pg_views AS
SELECT r.nspname AS schemaname, r.relname AS viewname, getvariable('pgbarrier_user') AS viewowner,
       @C@.pgb.view_body(r.viewdef) AS definition
FROM @C@.pgb.rels r WHERE r.relkind = 'v';

CREATE VIEW @C@.pgcat.pg_matviews AS
SELECT r.nspname AS schemaname, r.relname AS matviewname, getvariable('pgbarrier_user') AS matviewowner,
       CAST(NULL AS VARCHAR) AS tablespace, r.relhasindex AS hasindexes, true AS ispopulated,
       @C@.pgb.view_body(r.viewdef) AS definition
FROM @C@.pgb.rels r WHERE r.relkind = 'm';

CREATE VIEW @C@.pgcat.pg_indexes AS
SELECT n.nspname AS schemaname, x.table_name AS tablename, x.index_name AS indexname,
       CAST(NULL AS VARCHAR) AS tablespace,
       @C@.pgb.indexdef(x.is_unique, x.index_name, n.nspname, x.table_name, x.column_names)
           AS indexdef
FROM @C@.pgb.indexes x
JOIN @C@.pgb.nsps n ON n.duck_db = x.database_name AND n.duck_schema = x.schema_name;

-- statistics views: DuckDB keeps no scan or tuple counters, so they are 0 (and the
-- timestamps NULL); n_live_tup is DuckDB's estimated row count (Metabase's table sync)
CREATE VIEW @C@.pgcat.pg_stat_all_tables AS
SELECT CAST(r.oid AS BIGINT) AS relid, r.nspname AS schemaname, r.relname,
       CAST(0 AS BIGINT) AS seq_scan, CAST(0 AS BIGINT) AS seq_tup_read,
       CAST(0 AS BIGINT) AS idx_scan, CAST(0 AS BIGINT) AS idx_tup_fetch,
       CAST(0 AS BIGINT) AS n_tup_ins, CAST(0 AS BIGINT) AS n_tup_upd,
       CAST(0 AS BIGINT) AS n_tup_del, CAST(0 AS BIGINT) AS n_tup_hot_upd,
       CAST(r.reltuples AS BIGINT) AS n_live_tup, CAST(0 AS BIGINT) AS n_dead_tup,
       CAST(0 AS BIGINT) AS n_mod_since_analyze, CAST(0 AS BIGINT) AS n_ins_since_vacuum,
       CAST(NULL AS TIMESTAMPTZ) AS last_vacuum, CAST(NULL AS TIMESTAMPTZ) AS last_autovacuum,
       CAST(NULL AS TIMESTAMPTZ) AS last_analyze, CAST(NULL AS TIMESTAMPTZ) AS last_autoanalyze,
       CAST(0 AS BIGINT) AS vacuum_count, CAST(0 AS BIGINT) AS autovacuum_count,
       CAST(0 AS BIGINT) AS analyze_count, CAST(0 AS BIGINT) AS autoanalyze_count
FROM @C@.pgb.rels r WHERE r.relkind IN ('r', 'm');

CREATE VIEW @C@.pgcat.pg_stat_user_tables AS
SELECT * FROM @C@.pgcat.pg_stat_all_tables
WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'rw_catalog');

CREATE VIEW @C@.pgcat.pg_stat_sys_tables AS
SELECT * FROM @C@.pgcat.pg_stat_all_tables
WHERE schemaname IN ('pg_catalog', 'information_schema', 'rw_catalog');

CREATE VIEW @C@.pgcat.pg_statio_all_tables AS
SELECT relid, schemaname, relname, CAST(0 AS BIGINT) AS heap_blks_read,
       CAST(0 AS BIGINT) AS heap_blks_hit, CAST(0 AS BIGINT) AS idx_blks_read,
       CAST(0 AS BIGINT) AS idx_blks_hit, CAST(0 AS BIGINT) AS toast_blks_read,
       CAST(0 AS BIGINT) AS toast_blks_hit, CAST(0 AS BIGINT) AS tidx_blks_read,
       CAST(0 AS BIGINT) AS tidx_blks_hit
FROM @C@.pgcat.pg_stat_all_tables;

CREATE VIEW @C@.pgcat.pg_statio_user_tables AS
SELECT * FROM @C@.pgcat.pg_statio_all_tables
WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'rw_catalog');

CREATE VIEW @C@.pgcat.pg_stat_all_indexes AS
SELECT CAST(r.indrelid AS BIGINT) AS relid, CAST(r.oid AS BIGINT) AS indexrelid,
       r.nspname AS schemaname, t.relname, r.relname AS indexrelname,
       CAST(0 AS BIGINT) AS idx_scan, CAST(0 AS BIGINT) AS idx_tup_read,
       CAST(0 AS BIGINT) AS idx_tup_fetch
FROM @C@.pgb.rels r JOIN @C@.pgb.rels t ON t.oid = r.indrelid WHERE r.relkind = 'i';

CREATE VIEW @C@.pgcat.pg_stat_user_indexes AS
SELECT * FROM @C@.pgcat.pg_stat_all_indexes
WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'rw_catalog');

CREATE VIEW @C@.pgcat.pg_stat_activity AS
SELECT CAST(NULL AS BIGINT) AS datid, CAST(NULL AS VARCHAR) AS datname,
       CAST(NULL AS INTEGER) AS pid, CAST(NULL AS INTEGER) AS leader_pid,
       CAST(NULL AS BIGINT) AS usesysid, CAST(NULL AS VARCHAR) AS usename,
       CAST(NULL AS VARCHAR) AS application_name, CAST(NULL AS VARCHAR) AS client_addr,
       CAST(NULL AS VARCHAR) AS client_hostname, CAST(NULL AS INTEGER) AS client_port,
       CAST(NULL AS TIMESTAMPTZ) AS backend_start, CAST(NULL AS TIMESTAMPTZ) AS xact_start,
       CAST(NULL AS TIMESTAMPTZ) AS query_start, CAST(NULL AS TIMESTAMPTZ) AS state_change,
       CAST(NULL AS VARCHAR) AS wait_event_type, CAST(NULL AS VARCHAR) AS wait_event,
       CAST(NULL AS VARCHAR) AS state, CAST(NULL AS BIGINT) AS backend_xid,
       CAST(NULL AS BIGINT) AS backend_xmin, CAST(NULL AS BIGINT) AS query_id,
       CAST(NULL AS VARCHAR) AS query, CAST(NULL AS VARCHAR) AS backend_type WHERE false;

CREATE VIEW @C@.pgcat.pg_locks AS
SELECT CAST(NULL AS VARCHAR) AS locktype, CAST(NULL AS BIGINT) AS database,
       CAST(NULL AS BIGINT) AS relation, CAST(NULL AS INTEGER) AS page,
       CAST(NULL AS SMALLINT) AS tuple, CAST(NULL AS VARCHAR) AS virtualxid,
       CAST(NULL AS BIGINT) AS transactionid, CAST(NULL AS BIGINT) AS classid,
       CAST(NULL AS BIGINT) AS objid, CAST(NULL AS SMALLINT) AS objsubid,
       CAST(NULL AS VARCHAR) AS virtualtransaction, CAST(NULL AS INTEGER) AS pid,
       CAST(NULL AS VARCHAR) AS mode, CAST(NULL AS BOOLEAN) AS granted,
       CAST(NULL AS BOOLEAN) AS fastpath, CAST(NULL AS TIMESTAMPTZ) AS waitstart WHERE false;

-- a serial or identity column's sequence has its column's type (and range), as pg_sequence
CREATE VIEW @C@.pgcat.pg_sequences AS
SELECT n.nspname AS schemaname, s.sequence_name AS sequencename,
       getvariable('pgbarrier_user') AS sequenceowner,
       CASE q.seqtypid WHEN 23 THEN 'integer' WHEN 21 THEN 'smallint' ELSE 'bigint' END
           AS data_type,
       s.start_value, s.min_value, coalesce(q.seqmax, s.max_value) AS max_value,
       s.increment_by, s.cycle, CAST(1 AS BIGINT) AS cache_size, s.last_value
FROM duckdb_sequences() s
JOIN @C@.pgb.nsps n ON n.duck_db = s.database_name AND n.duck_schema = s.schema_name
LEFT JOIN @C@.pgcat.pg_sequence q ON q.seqrelid = @C@.pgb.reloid(n.nspname, s.sequence_name);

CREATE VIEW @C@.pgcat.pg_policies AS
SELECT CAST(NULL AS VARCHAR) AS schemaname, CAST(NULL AS VARCHAR) AS tablename,
       CAST(NULL AS VARCHAR) AS policyname, CAST(NULL AS VARCHAR) AS permissive,
       CAST(NULL AS VARCHAR[]) AS roles, CAST(NULL AS VARCHAR) AS cmd,
       CAST(NULL AS VARCHAR) AS qual, CAST(NULL AS VARCHAR) AS with_check WHERE false;

CREATE VIEW @C@.pgcat.pg_rules AS
SELECT CAST(NULL AS VARCHAR) AS schemaname, CAST(NULL AS VARCHAR) AS tablename,
       CAST(NULL AS VARCHAR) AS rulename, CAST(NULL AS VARCHAR) AS definition WHERE false;

-- ------------------------------------------------------------------ functions (schema pgcat)

CREATE MACRO @C@.pgcat.pg_encoding_to_char(enc) AS CASE WHEN enc = 6 THEN 'UTF8' ELSE '' END;
CREATE MACRO @C@.pgcat.pg_char_to_encoding(nm) AS CASE WHEN upper(nm) IN ('UTF8', 'UTF-8') THEN 6 ELSE -1 END;
CREATE MACRO @C@.pgcat.pg_table_is_visible(reloid) AS
    coalesce((SELECT r.k_nspname IN ('public', 'pg_catalog', 'pg_temp_1')
              FROM @C@.pgb.k_rels r WHERE r.k_oid = reloid), false);
CREATE MACRO @C@.pgcat.pg_type_is_visible(typoid) AS true;
CREATE MACRO @C@.pgcat.pg_opclass_is_visible(opcoid) AS true;
CREATE MACRO @C@.pgcat.pg_opfamily_is_visible(opfoid) AS true;
CREATE MACRO @C@.pgcat.pg_operator_is_visible(oproid) AS true;
CREATE MACRO @C@.pgcat.pg_collation_is_visible(colloid) AS true;
CREATE MACRO @C@.pgcat.pg_conversion_is_visible(convoid) AS true;
CREATE MACRO @C@.pgcat.pg_statistics_obj_is_visible(stxoid) AS true;
CREATE MACRO @C@.pgcat.pg_ts_config_is_visible(cfgoid) AS true;
CREATE MACRO @C@.pgcat.pg_tablespace_location(spcoid) AS '';
CREATE MACRO @C@.pgcat.getdatabaseencoding() AS 'UTF8';
CREATE MACRO @C@.pgcat.pg_function_is_visible(procoid) AS true;
CREATE MACRO @C@.pgcat.format_type(typoid, typmod) AS
    CASE WHEN typoid IS NULL THEN NULL
         WHEN typoid = 1700 AND typmod > 4
         THEN 'numeric(' || ((typmod - 4) >> 16) || ',' || ((typmod - 4) & 65535) || ')'
         WHEN typoid = 1231 AND typmod > 4
         THEN 'numeric(' || ((typmod - 4) >> 16) || ',' || ((typmod - 4) & 65535) || ')[]'
         WHEN typoid IN (1043, 1042, 1015, 1014) AND typmod > 4
         THEN CASE WHEN typoid IN (1043, 1015) THEN 'character varying(' ELSE 'character(' END
              || (typmod - 4) || ')' || CASE WHEN typoid IN (1015, 1014) THEN '[]' ELSE '' END
         -- a time type's precision: timestamp(3) without time zone, time(2) with time zone
         WHEN typoid IN (1114, 1184, 1083, 1266, 1115, 1185, 1183, 1270) AND typmod >= 0
         THEN CASE WHEN typoid IN (1114, 1184, 1115, 1185) THEN 'timestamp' ELSE 'time' END
              || '(' || typmod || ') with'
              || CASE WHEN typoid IN (1114, 1083, 1115, 1183) THEN 'out' ELSE '' END
              || ' time zone'
              || CASE WHEN typoid IN (1115, 1185, 1183, 1270) THEN '[]' ELSE '' END
         ELSE coalesce((SELECT t.k_fmt FROM @C@.pgb.k_types t WHERE t.k_oid = typoid), '???') END;
-- the rewrite calls the last overload with the session's search path (PostgreSQL's names):
-- a serial column's nextval('seq') names its sequence as PostgreSQL decompiles it,
-- nextval('seq'::regclass), qualified when its schema (the table's, unless it is named)
-- is not on the path
CREATE MACRO @C@.pgcat.pg_get_expr(expr, relid) AS expr,
    (expr, relid, pretty) AS expr,
    (expr, relid, pretty, visible) AS
    CASE WHEN regexp_full_match(expr, 'nextval\(''([^''.]+\.)?[^''.]+''\)')
         THEN 'nextval(''' || (
             SELECT CASE WHEN list_contains(visible, nsp) THEN '' ELSE nsp || '.' END
             FROM (SELECT coalesce(nullif(regexp_extract(expr, 'nextval\(''([^''.]+)\.', 1), ''),
                                   (SELECT r.k_nspname FROM @C@.pgb.k_rels r
                                    WHERE r.k_oid = relid)) AS nsp))
              || regexp_extract(expr, '([^''.]+)''\)$', 1) || '''::regclass)'
         ELSE expr END;
-- a foreign key's referenced table is qualified when its schema is not on the path
CREATE MACRO @C@.pgcat.pg_get_constraintdef(conoid) AS
    (SELECT k.k_condef FROM @C@.pgb.k_cons k WHERE k.k_oid = conoid),
    (conoid, pretty) AS
    (SELECT k.k_condef FROM @C@.pgb.k_cons k WHERE k.k_oid = conoid),
    (conoid, pretty, visible) AS
    (SELECT CASE WHEN k.k_refnsp IS NULL OR list_contains(visible, k.k_refnsp) THEN k.k_condef
                 ELSE replace(k.k_condef, ' REFERENCES ',
                              ' REFERENCES ' || CASE WHEN regexp_full_match(k.k_refnsp, '[a-z_][a-z0-9_$]*')
                              THEN k.k_refnsp ELSE '"' || replace(k.k_refnsp, '"', '""') || '"'
                              END || '.') END
     FROM @C@.pgb.k_cons k WHERE k.k_oid = conoid);
CREATE MACRO @C@.pgcat.pg_get_indexdef(idxoid) AS
    (SELECT indexdef FROM @C@.pgcat.pg_indexes i
     WHERE @C@.pgb.reloid(i.schemaname, i.indexname) = idxoid),
    -- column n's name or expression ('' past the last), the whole definition for 0
    (idxoid, col, pretty) AS
    (SELECT CASE WHEN col = 0 THEN @C@.pgb.indexdef(x.is_unique, x.index_name, n.nspname,
                                                    x.table_name, x.column_names)
                 ELSE coalesce(x.column_names[col], '') END
     FROM @C@.pgb.indexes x
     JOIN @C@.pgb.nsps n ON n.duck_db = x.database_name AND n.duck_schema = x.schema_name
     WHERE @C@.pgb.reloid(n.nspname, x.index_name) = idxoid);
CREATE MACRO @C@.pgcat.pg_get_viewdef(viewoid) AS
    (SELECT @C@.pgb.view_body(r.k_viewdef) FROM @C@.pgb.k_rels r WHERE r.k_oid = viewoid),
    (viewoid, pretty) AS
    (SELECT @C@.pgb.view_body(r.k_viewdef) FROM @C@.pgb.k_rels r WHERE r.k_oid = viewoid);
CREATE MACRO @C@.pgcat.pg_get_partkeydef(reloid) AS CAST(NULL AS VARCHAR);
-- no partitions: a relation's only ancestor is itself (psql's \d foreign-key queries). The
-- table form has a second column, depth 1: DuckDB ignores WITH ORDINALITY on a table macro,
-- and psql writes ``pg_partition_ancestors(x) WITH ORDINALITY AS a(relid, depth)``
CREATE MACRO @C@.pgcat.pg_partition_ancestors(reloid) AS CAST(reloid AS BIGINT);
CREATE MACRO @C@.pgcat.pg_partition_ancestors(reloid) AS TABLE
    SELECT CAST(reloid AS BIGINT) AS relid, CAST(1 AS BIGINT) AS depth;
CREATE MACRO @C@.pgcat.pg_get_statisticsobjdef_columns(statoid) AS CAST(NULL AS VARCHAR);
CREATE MACRO @C@.pgcat.pg_get_function_result(procoid) AS CAST(NULL AS VARCHAR);
CREATE MACRO @C@.pgcat.pg_get_function_arguments(procoid) AS CAST(NULL AS VARCHAR);
CREATE MACRO @C@.pgcat.pg_get_function_identity_arguments(procoid) AS CAST(NULL AS VARCHAR);
CREATE MACRO @C@.pgcat.pg_relation_is_publishable(reloid) AS false;
CREATE MACRO @C@.pgcat.pg_relation_size(reloid) AS CAST(0 AS BIGINT),
    (reloid, fork) AS CAST(0 AS BIGINT);
CREATE MACRO @C@.pgcat.pg_total_relation_size(reloid) AS CAST(0 AS BIGINT);
CREATE MACRO @C@.pgcat.pg_table_size(reloid) AS CAST(0 AS BIGINT);
CREATE MACRO @C@.pgcat.pg_indexes_size(reloid) AS CAST(0 AS BIGINT);
CREATE MACRO @C@.pgcat.pg_database_size(db) AS CAST(0 AS BIGINT);
CREATE MACRO @C@.pgcat.pg_stat_get_numscans(reloid) AS CAST(0 AS BIGINT);
CREATE MACRO @C@.pgcat.pg_is_in_recovery() AS false;
CREATE MACRO @C@.pgcat.pg_backend_pid() AS CAST(0 AS INTEGER);
CREATE MACRO @C@.pgcat.obj_description(obj) AS
    (SELECT d.description FROM @C@.pgcat.pg_description d WHERE d.objoid = obj AND d.objsubid = 0 LIMIT 1),
    (obj, catalog) AS
    (SELECT d.description FROM @C@.pgcat.pg_description d WHERE d.objoid = obj AND d.objsubid = 0 LIMIT 1);
CREATE MACRO @C@.pgcat.shobj_description(obj, catalog) AS CAST(NULL AS VARCHAR);
CREATE MACRO @C@.pgcat.col_description(reloid, colnum) AS
    (SELECT d.description FROM @C@.pgcat.pg_description d
     WHERE d.objoid = reloid AND d.objsubid = colnum LIMIT 1);
CREATE MACRO @C@.pgcat.array_upper(arr, dim) AS CASE WHEN len(arr) = 0 THEN NULL ELSE len(arr) END;
CREATE MACRO @C@.pgcat.array_lower(arr, dim) AS CASE WHEN len(arr) = 0 THEN NULL ELSE 1 END;
CREATE MACRO @C@.pgcat.quote_ident(nm) AS
    CASE WHEN regexp_full_match(nm, '[a-z_][a-z0-9_$]*')
              AND nm NOT IN (SELECT keyword_name FROM duckdb_keywords()
                               WHERE keyword_category = 'reserved')
         THEN nm ELSE '"' || replace(nm, '"', '""') || '"' END;
-- PostgreSQL's quote_literal(): a backslash makes it an E'' string with backslashes doubled
CREATE MACRO @C@.pgcat.quote_literal(val) AS
    CASE WHEN val IS NULL THEN NULL
         WHEN contains(CAST(val AS VARCHAR), '\')
         THEN 'E''' || replace(replace(CAST(val AS VARCHAR), '\', '\\'), '''', '''''') || ''''
         ELSE '''' || replace(CAST(val AS VARCHAR), '''', '''''') || '''' END;
-- a name as text, qualified or not, quoted or not ("a"."b": the quotes are dropped)
-- a qualified name split into its identifiers: unquoted ones folded to lower case, quoted
-- ones kept with "" undoubled (Grafana's column picker)
CREATE MACRO @C@.pgcat.parse_ident(nm) AS
    list_transform(regexp_extract_all(nm, '"(?:[^"]|"")*"|[^".]+'),
                   lambda p: CASE WHEN starts_with(p, '"') THEN replace(p[2:-2], '""', '"')
                                  ELSE lower(trim(p)) END),
    (nm, strict) AS
    list_transform(regexp_extract_all(nm, '"(?:[^"]|"")*"|[^".]+'),
                   lambda p: CASE WHEN starts_with(p, '"') THEN replace(p[2:-2], '""', '"')
                                  ELSE lower(trim(p)) END);
CREATE MACRO @C@.pgcat.regclass_oid(nm) AS
    (SELECT r.k_oid FROM @C@.pgb.k_rels r
     WHERE r.k_relname = CASE WHEN contains(nm, '.') THEN replace(split_part(nm, '.', 2), '"', '')
                              ELSE replace(nm, '"', '') END
       AND (NOT contains(nm, '.') OR r.k_nspname = replace(split_part(nm, '.', 1), '"', ''))
     ORDER BY r.k_nspname = 'pg_catalog' DESC, r.k_nspname = 'public' DESC LIMIT 1);
-- a relation's name, qualified when its schema is not in visible (the session's search
-- path and pg_catalog: the rewrite passes them)
CREATE MACRO @C@.pgcat.regclass_name(reloid) AS
    coalesce((SELECT CASE WHEN r.k_nspname IN ('public', 'pg_catalog') THEN r.k_relname
                          ELSE r.k_nspname || '.' || r.k_relname END
              FROM @C@.pgb.k_rels r WHERE r.k_oid = reloid), CAST(reloid AS VARCHAR)),
    (reloid, visible) AS
    coalesce((SELECT CASE WHEN list_contains(visible, r.k_nspname) THEN r.k_relname
                          ELSE r.k_nspname || '.' || r.k_relname END
              FROM @C@.pgb.k_rels r WHERE r.k_oid = reloid), CAST(reloid AS VARCHAR));
CREATE MACRO @C@.pgcat.regtype_oid(nm) AS
    (SELECT t.k_oid FROM @C@.pgb.k_types t
     WHERE t.k_typname = replace(nm, 'pg_catalog.', '') OR t.k_fmt = replace(nm, 'pg_catalog.', '')
     LIMIT 1);
CREATE MACRO @C@.pgcat.regtype_name(typoid) AS
    coalesce((SELECT t.k_fmt FROM @C@.pgb.k_types t WHERE t.k_oid = typoid), CAST(typoid AS VARCHAR));
CREATE MACRO @C@.pgcat.regnamespace_oid(nm) AS
    (SELECT n.k_oid FROM @C@.pgb.k_nsps n WHERE n.k_nspname = nm);
CREATE MACRO @C@.pgcat.regnamespace_name(nspoid) AS
    coalesce((SELECT n.k_nspname FROM @C@.pgb.k_nsps n WHERE n.k_oid = nspoid), CAST(nspoid AS VARCHAR));
CREATE MACRO @C@.pgcat.to_regclass(nm) AS @C@.pgcat.regclass_oid(nm);
CREATE MACRO @C@.pgcat.to_regtype(nm) AS @C@.pgcat.regtype_oid(nm);
CREATE MACRO @C@.pgcat.to_regnamespace(nm) AS @C@.pgcat.regnamespace_oid(nm);
-- the sequence a serial / identity column's default uses (duckdb_dialect names it so)
CREATE MACRO @C@.pgcat.pg_get_serial_sequence(tbl, col) AS
    (SELECT CASE WHEN s.schema_name = 'main' THEN 'public' ELSE s.schema_name END
            || '.' || s.sequence_name
     FROM duckdb_sequences() s
     WHERE s.database_name = current_database() AND NOT s.temporary
       AND s.sequence_name = lower(string_split(tbl, '.')[-1]) || '_' || lower(col) || '_seq'
     ORDER BY s.schema_name <> 'main' LIMIT 1);
CREATE MACRO @C@.pgcat._pg_expandarray(arr) AS
    list_transform(generate_series(1, len(arr)), lambda i: {'x': arr[i], 'n': CAST(i AS INTEGER)});
CREATE MACRO @C@.pgcat.pg_get_keywords() AS TABLE
    SELECT keyword_name AS word,
           CASE keyword_category WHEN 'reserved' THEN 'R' WHEN 'unreserved' THEN 'U'
                WHEN 'type_function' THEN 'T' ELSE 'C' END AS catcode,
           true AS barelabel,
           CASE keyword_category WHEN 'reserved' THEN 'reserved'
                WHEN 'unreserved' THEN 'unreserved'
                WHEN 'type_function' THEN 'reserved (can be function or type)'
                ELSE 'unreserved (cannot be function or type)' END AS catdesc,
           'can be bare label' AS baredesc
    FROM duckdb_keywords();

-- ------------------------------------------------------------------ information_schema

CREATE VIEW @C@.infoschema.schemata AS
SELECT '@DB@' AS catalog_name, nspname AS schema_name, getvariable('pgbarrier_user') AS schema_owner,
       CAST(NULL AS VARCHAR) AS default_character_set_catalog,
       CAST(NULL AS VARCHAR) AS default_character_set_schema,
       CAST(NULL AS VARCHAR) AS default_character_set_name, CAST(NULL AS VARCHAR) AS sql_path
FROM @C@.pgb.nsps;

CREATE VIEW @C@.infoschema.tables AS
SELECT '@DB@' AS table_catalog, nspname AS table_schema, relname AS table_name,
       CASE WHEN relkind = 'v' THEN 'VIEW' WHEN temporary THEN 'LOCAL TEMPORARY'
            ELSE 'BASE TABLE' END AS table_type,
       CAST(NULL AS VARCHAR) AS self_referencing_column_name,
       CAST(NULL AS VARCHAR) AS reference_generation, CAST(NULL AS VARCHAR) AS user_defined_type_catalog,
       CAST(NULL AS VARCHAR) AS user_defined_type_schema, CAST(NULL AS VARCHAR) AS user_defined_type_name,
       CASE WHEN relkind = 'r' THEN 'YES' ELSE 'NO' END AS is_insertable_into,
       'NO' AS is_typed, CAST(NULL AS VARCHAR) AS commit_action
FROM @C@.pgb.rels WHERE relkind IN ('r', 'v');

CREATE VIEW @C@.infoschema.views AS
SELECT '@DB@' AS table_catalog, nspname AS table_schema, relname AS table_name,
       @C@.pgb.view_body(viewdef) AS view_definition, 'NONE' AS check_option,
       'NO' AS is_updatable, 'NO' AS is_insertable_into, 'NO' AS is_trigger_updatable,
       'NO' AS is_trigger_deletable, 'NO' AS is_trigger_insertable_into
FROM @C@.pgb.rels WHERE relkind = 'v';

CREATE VIEW @C@.infoschema.columns AS
SELECT '@DB@' AS table_catalog, r.nspname AS table_schema, r.relname AS table_name,
       c.attname AS column_name, CAST(c.attnum AS INTEGER) AS ordinal_position,
       -- decompiled as pg_get_expr does it (a view cannot see the session's search path:
       -- a sequence outside public and pg_catalog is qualified)
       CASE WHEN c.attidentity IS NULL
            THEN @C@.pgcat.pg_get_expr(c.column_default, c.attrelid, false,
                                       ['pg_catalog', 'public']) END AS column_default,
       CASE WHEN c.attnotnull THEN 'NO' ELSE 'YES' END AS is_nullable,
       CASE WHEN ends_with(c.data_type, '[]') THEN 'ARRAY'
            ELSE coalesce((SELECT t.fmt FROM @C@.pgb.types t WHERE t.oid = c.atttypid), 'text')
            END AS data_type,
       CASE WHEN c.atttypid IN (1043, 1042) AND c.atttypmod > 4 THEN c.atttypmod - 4 END
           AS character_maximum_length,
       CASE WHEN c.atttypid IN (1043, 1042) AND c.atttypmod > 4 THEN (c.atttypmod - 4) * 4
            WHEN c.atttypid IN (25, 1043, 1042) THEN 1073741824 END AS character_octet_length,
       CASE WHEN c.atttypid = 1700 AND c.atttypmod > 4 THEN (c.atttypmod - 4) >> 16 END
           AS numeric_precision,
       CASE WHEN c.atttypid = 1700 AND c.atttypmod > 4 THEN 10 END AS numeric_precision_radix,
       CASE WHEN c.atttypid = 1700 AND c.atttypmod > 4 THEN (c.atttypmod - 4) & 65535 END AS numeric_scale,
       CAST(NULL AS INTEGER) AS datetime_precision,
       CAST(NULL AS VARCHAR) AS interval_type, CAST(NULL AS INTEGER) AS interval_precision,
       CAST(NULL AS VARCHAR) AS character_set_catalog, CAST(NULL AS VARCHAR) AS character_set_schema,
       CAST(NULL AS VARCHAR) AS character_set_name, CAST(NULL AS VARCHAR) AS collation_catalog,
       CAST(NULL AS VARCHAR) AS collation_schema, CAST(NULL AS VARCHAR) AS collation_name,
       CAST(NULL AS VARCHAR) AS domain_catalog, CAST(NULL AS VARCHAR) AS domain_schema,
       CAST(NULL AS VARCHAR) AS domain_name, '@DB@' AS udt_catalog, 'pg_catalog' AS udt_schema,
       coalesce((SELECT t.typname FROM @C@.pgb.types t WHERE t.oid = c.atttypid), 'text')
           AS udt_name,
       CAST(NULL AS VARCHAR) AS scope_catalog, CAST(NULL AS VARCHAR) AS scope_schema,
       CAST(NULL AS VARCHAR) AS scope_name, CAST(NULL AS INTEGER) AS maximum_cardinality,
       CAST(c.attnum AS VARCHAR) AS dtd_identifier, 'NO' AS is_self_referencing,
       CASE WHEN c.attidentity IS NULL THEN 'NO' ELSE 'YES' END AS is_identity,
       CASE c.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END
           AS identity_generation,
       CAST(NULL AS VARCHAR) AS identity_start, CAST(NULL AS VARCHAR) AS identity_increment,
       CAST(NULL AS VARCHAR) AS identity_maximum, CAST(NULL AS VARCHAR) AS identity_minimum,
       CAST(NULL AS VARCHAR) AS identity_cycle, 'NEVER' AS is_generated,
       CAST(NULL AS VARCHAR) AS generation_expression,
       CASE WHEN r.relkind = 'r' THEN 'YES' ELSE 'NO' END AS is_updatable
FROM @C@.pgb.cols c JOIN @C@.pgb.rels r ON r.oid = c.attrelid;

CREATE VIEW @C@.infoschema.table_constraints AS
SELECT '@DB@' AS constraint_catalog, n.nspname AS constraint_schema, k.conname AS constraint_name,
       '@DB@' AS table_catalog, n.nspname AS table_schema, r.relname AS table_name,
       CASE k.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE'
            WHEN 'f' THEN 'FOREIGN KEY' ELSE 'CHECK' END AS constraint_type,
       'NO' AS is_deferrable, 'NO' AS initially_deferred, 'YES' AS enforced,
       CAST(NULL AS VARCHAR) AS nulls_distinct
FROM @C@.pgb.cons k JOIN @C@.pgb.rels r ON r.oid = k.conrelid
JOIN @C@.pgb.nsps n ON n.oid = k.connamespace;

CREATE VIEW @C@.infoschema.key_column_usage AS
SELECT '@DB@' AS constraint_catalog, r.nspname AS constraint_schema, k.conname AS constraint_name,
       '@DB@' AS table_catalog, r.nspname AS table_schema, r.relname AS table_name,
       a.attname AS column_name, CAST(u.i AS INTEGER) AS ordinal_position,
       CAST(NULL AS INTEGER) AS position_in_unique_constraint
FROM (SELECT k.*, unnest(k.conkey) AS attnum, generate_subscripts(k.conkey, 1) AS i
      FROM @C@.pgb.cons k WHERE k.contype IN ('p', 'u', 'f')) AS u
JOIN @C@.pgb.cons k ON k.oid = u.oid
JOIN @C@.pgb.rels r ON r.oid = u.conrelid
JOIN @C@.pgb.cols a ON a.attrelid = u.conrelid AND a.attnum = u.attnum;

CREATE VIEW @C@.infoschema.referential_constraints AS
SELECT '@DB@' AS constraint_catalog, n.nspname AS constraint_schema, k.conname AS constraint_name,
       '@DB@' AS unique_constraint_catalog, n.nspname AS unique_constraint_schema,
       u.conname AS unique_constraint_name, 'NONE' AS match_option,
       'NO ACTION' AS update_rule, 'NO ACTION' AS delete_rule
FROM @C@.pgb.cons k JOIN @C@.pgb.nsps n ON n.oid = k.connamespace
LEFT JOIN @C@.pgb.cons u ON u.conindid = k.conindid AND u.contype IN ('p', 'u')
WHERE k.contype = 'f';

-- the columns a constraint uses: a foreign key's are the referenced ones, as in PostgreSQL
CREATE VIEW @C@.infoschema.constraint_column_usage AS
SELECT '@DB@' AS table_catalog, r.nspname AS table_schema, r.relname AS table_name,
       a.attname AS column_name, '@DB@' AS constraint_catalog, r.nspname AS constraint_schema,
       u.conname AS constraint_name
FROM (SELECT k.conname, CASE WHEN k.contype = 'f' THEN k.confrelid ELSE k.conrelid END AS relid,
             unnest(CASE WHEN k.contype = 'f' THEN k.confkey ELSE k.conkey END) AS attnum
      FROM @C@.pgb.cons k) u
JOIN @C@.pgb.rels r ON r.oid = u.relid
JOIN @C@.pgb.cols a ON a.attrelid = u.relid AND a.attnum = u.attnum;

CREATE VIEW @C@.infoschema.constraint_table_usage AS
SELECT '@DB@' AS table_catalog, r.nspname AS table_schema, r.relname AS table_name,
       '@DB@' AS constraint_catalog, r.nspname AS constraint_schema, k.conname AS constraint_name
FROM @C@.pgb.cons k
JOIN @C@.pgb.rels r ON r.oid = CASE WHEN k.contype = 'f' THEN k.confrelid ELSE k.conrelid END
WHERE k.contype IN ('p', 'u', 'f');

-- CHECK constraints, and each NOT NULL column as PostgreSQL lists it (named
-- <namespace oid>_<table oid>_<column number>_not_null)
CREATE VIEW @C@.infoschema.check_constraints AS
SELECT '@DB@' AS constraint_catalog, n.nspname AS constraint_schema, k.conname AS constraint_name,
       '(' || substr(k.condef, 7) || ')' AS check_clause
FROM @C@.pgb.cons k JOIN @C@.pgb.nsps n ON n.oid = k.connamespace WHERE k.contype = 'c'
UNION ALL
SELECT '@DB@', r.nspname, r.relnamespace || '_' || r.oid || '_' || a.attnum || '_not_null',
       a.attname || ' IS NOT NULL'
FROM @C@.pgb.cols a JOIN @C@.pgb.rels r ON r.oid = a.attrelid
WHERE a.attnotnull AND r.relkind = 'r';

CREATE VIEW @C@.infoschema.sequences AS
SELECT '@DB@' AS sequence_catalog, n.nspname AS sequence_schema, s.sequence_name,
       'bigint' AS data_type, CAST(64 AS INTEGER) AS numeric_precision,
       CAST(2 AS INTEGER) AS numeric_precision_radix, CAST(0 AS INTEGER) AS numeric_scale,
       CAST(s.start_value AS VARCHAR) AS start_value,
       CAST(s.min_value AS VARCHAR) AS minimum_value,
       CAST(s.max_value AS VARCHAR) AS maximum_value,
       CAST(s.increment_by AS VARCHAR) AS increment,
       CASE WHEN s.cycle THEN 'YES' ELSE 'NO' END AS cycle_option
FROM duckdb_sequences() s
JOIN @C@.pgb.nsps n ON n.duck_db = s.database_name AND n.duck_schema = s.schema_name;

-- the session's user owns everything, so holds every privilege on every table
-- there are no routines (pg_proc is empty)
CREATE VIEW @C@.infoschema.routine_privileges AS
SELECT CAST(NULL AS VARCHAR) AS grantor, CAST(NULL AS VARCHAR) AS grantee,
       CAST(NULL AS VARCHAR) AS specific_catalog, CAST(NULL AS VARCHAR) AS specific_schema,
       CAST(NULL AS VARCHAR) AS specific_name, CAST(NULL AS VARCHAR) AS routine_catalog,
       CAST(NULL AS VARCHAR) AS routine_schema, CAST(NULL AS VARCHAR) AS routine_name,
       CAST(NULL AS VARCHAR) AS privilege_type, CAST(NULL AS VARCHAR) AS is_grantable
WHERE false;

CREATE VIEW @C@.infoschema.table_privileges AS
SELECT getvariable('pgbarrier_user') AS grantor, getvariable('pgbarrier_user') AS grantee,
       '@DB@' AS table_catalog, r.nspname AS table_schema, r.relname AS table_name,
       p.privilege_type, 'YES' AS is_grantable,
       CASE WHEN p.privilege_type = 'SELECT' THEN 'YES' ELSE 'NO' END AS with_hierarchy
FROM @C@.pgb.rels r,
     (VALUES ('INSERT'), ('SELECT'), ('UPDATE'), ('DELETE'), ('TRUNCATE'), ('REFERENCES'),
             ('TRIGGER')) AS p(privilege_type)
WHERE r.relkind IN ('r', 'v', 'm')
  AND r.nspname NOT IN ('pg_catalog', 'information_schema', 'rw_catalog');

CREATE VIEW @C@.infoschema.triggers AS
SELECT CAST(NULL AS VARCHAR) AS trigger_catalog, CAST(NULL AS VARCHAR) AS trigger_schema,
       CAST(NULL AS VARCHAR) AS trigger_name, CAST(NULL AS VARCHAR) AS event_manipulation,
       CAST(NULL AS VARCHAR) AS event_object_catalog,
       CAST(NULL AS VARCHAR) AS event_object_schema,
       CAST(NULL AS VARCHAR) AS event_object_table, CAST(NULL AS INTEGER) AS action_order,
       CAST(NULL AS VARCHAR) AS action_condition, CAST(NULL AS VARCHAR) AS action_statement,
       CAST(NULL AS VARCHAR) AS action_orientation, CAST(NULL AS VARCHAR) AS action_timing,
       CAST(NULL AS VARCHAR) AS action_reference_old_table,
       CAST(NULL AS VARCHAR) AS action_reference_new_table,
       CAST(NULL AS VARCHAR) AS action_reference_old_row,
       CAST(NULL AS VARCHAR) AS action_reference_new_row,
       CAST(NULL AS TIMESTAMPTZ) AS created WHERE false;

CREATE VIEW @C@.infoschema.routines AS
SELECT CAST(NULL AS VARCHAR) AS specific_catalog, CAST(NULL AS VARCHAR) AS specific_schema,
       CAST(NULL AS VARCHAR) AS specific_name, CAST(NULL AS VARCHAR) AS routine_catalog,
       CAST(NULL AS VARCHAR) AS routine_schema, CAST(NULL AS VARCHAR) AS routine_name,
       CAST(NULL AS VARCHAR) AS routine_type, CAST(NULL AS VARCHAR) AS data_type WHERE false;

-- ------------------------------------------------------------------ roles and databases

-- one role: the session's user (pgbarrier has no roles of its own), the owner of everything
CREATE VIEW @C@.pgcat.pg_roles AS
SELECT getvariable('pgbarrier_user') AS rolname, true AS rolsuper, true AS rolinherit,
       true AS rolcreaterole, true AS rolcreatedb, true AS rolcanlogin,
       false AS rolreplication, CAST(-1 AS INTEGER) AS rolconnlimit,
       '********' AS rolpassword, CAST(NULL AS TIMESTAMPTZ) AS rolvaliduntil,
       false AS rolbypassrls, CAST(NULL AS VARCHAR[]) AS rolconfig, CAST(10 AS BIGINT) AS oid;

CREATE VIEW @C@.pgcat.pg_authid AS
SELECT CAST(10 AS BIGINT) AS oid, getvariable('pgbarrier_user') AS rolname, true AS rolsuper,
       true AS rolinherit, true AS rolcreaterole, true AS rolcreatedb, true AS rolcanlogin,
       false AS rolreplication, false AS rolbypassrls, CAST(-1 AS INTEGER) AS rolconnlimit,
       CAST(NULL AS VARCHAR) AS rolpassword, CAST(NULL AS TIMESTAMPTZ) AS rolvaliduntil;

CREATE VIEW @C@.pgcat.pg_user AS
SELECT getvariable('pgbarrier_user') AS usename, CAST(10 AS BIGINT) AS usesysid,
       true AS usecreatedb, true AS usesuper, false AS userepl, false AS usebypassrls,
       '********' AS passwd, CAST(NULL AS TIMESTAMPTZ) AS valuntil,
       CAST(NULL AS VARCHAR[]) AS useconfig;

CREATE MACRO @C@.pgcat.pg_get_userbyid(roleoid) AS
    CASE WHEN roleoid = 10 THEN getvariable('pgbarrier_user')
         ELSE 'unknown (OID=' || roleoid || ')' END;

-- pgbarrier's databases (the backend keeps pgb.databases current in every open database)
CREATE VIEW @C@.pgcat.pg_database AS
SELECT CAST(@C@.pgb.hash_oid('d', '', name) AS BIGINT) AS oid, name AS datname,
       CAST(10 AS BIGINT) AS datdba, CAST(6 AS INTEGER) AS encoding, 'c' AS datlocprovider,
       false AS datistemplate, true AS datallowconn, CAST(-1 AS INTEGER) AS datconnlimit,
       CAST(0 AS BIGINT) AS datfrozenxid, CAST(0 AS BIGINT) AS datminmxid,
       CAST(1663 AS BIGINT) AS dattablespace, 'C.UTF-8' AS datcollate, 'C.UTF-8' AS datctype,
       CAST(NULL AS VARCHAR) AS daticulocale, CAST(NULL AS VARCHAR) AS datcollversion,
       CAST(NULL AS VARCHAR[]) AS datacl
FROM @C@.pgb.databases;
