-- PostgreSQL's privilege inquiry functions (has_*_privilege) and the strict reg* lookups.
--
-- DuckDB answers every has_*_privilege with true, for any name and any privilege word.
-- pgbarrier has no privileges on DuckDB (every session may use every object of its
-- database), so an object that exists is the session's: true. What PostgreSQL refuses is
-- refused the same way: a name that names nothing (42P01, 3F000, 3D000, 42703, 42883,
-- 42704 for a role), a privilege type the object kind does not have (22023, the chunk as
-- written), an unknown OID is NULL. pgb.fail raises through DuckDB's error() with the
-- SQLSTATE in front ("pgbarrier:XXXXX:message"), which duckdb_errors turns back into it.

CREATE MACRO @C@.pgb.fail(state, msg) AS error('pgbarrier:' || state || ':' || msg);

-- the first comma-separated chunk of priv that is not one of known (or "X WITH GRANT
-- OPTION"), trimmed as PostgreSQL reports it; NULL when every chunk is known
CREATE MACRO @C@.pgb.bad_privilege(priv, known) AS
    list_filter(list_transform(string_split(priv, ','), lambda c: trim(c)),
                lambda c: NOT list_contains(known, upper(c))
                          AND NOT list_contains(list_transform(known,
                                                lambda k: k || ' WITH GRANT OPTION'), upper(c)))[1];
CREATE MACRO @C@.pgb.privilege_ok(priv, known) AS
    CASE WHEN priv IS NULL THEN NULL
         WHEN @C@.pgb.bad_privilege(priv, known) IS NOT NULL
         THEN @C@.pgb.fail('22023', 'unrecognized privilege type: "'
                                    || @C@.pgb.bad_privilege(priv, known) || '"')
         ELSE true END;

-- a role named (or its OID): only the session's user is a role on DuckDB; PUBLIC is
-- asked about with pgb.is_public and holds what PostgreSQL grants it by default
CREATE MACRO @C@.pgb.is_public(usr) AS
    typeof(usr) = 'VARCHAR' AND lower(CAST(usr AS VARCHAR)) = 'public';
CREATE MACRO @C@.pgb.role_ok(usr) AS
    CASE WHEN usr IS NULL THEN NULL
         WHEN typeof(usr) <> 'VARCHAR' THEN TRY_CAST(usr AS BIGINT) = 10 OR NULL
         WHEN CAST(usr AS VARCHAR) = getvariable('pgbarrier_user') THEN true
         ELSE @C@.pgb.fail('42704', 'role "' || CAST(usr AS VARCHAR) || '" does not exist') END;
-- PUBLIC's default privileges: CONNECT and TEMPORARY on databases, EXECUTE on functions,
-- USAGE on schema public; none on relations
CREATE MACRO @C@.pgb.public_has(kind, obj, priv) AS
    list_bool_and(list_transform(string_split(upper(priv), ','), lambda c:
        CASE kind WHEN 'database' THEN regexp_replace(trim(c), ' WITH GRANT OPTION$', '')
                                       IN ('CONNECT', 'TEMPORARY', 'TEMP')
                  WHEN 'function' THEN true
                  WHEN 'schema' THEN regexp_replace(trim(c), ' WITH GRANT OPTION$', '') = 'USAGE'
                                     AND CAST(obj AS VARCHAR) IN ('public', '2200')
                  ELSE false END));

-- a relation named (text, as ::regclass reads it) or its OID: its OID, NULL for an unknown
-- OID, 42P01 for a name that names nothing
CREATE MACRO @C@.pgb.rel_ref(tbl) AS
    CASE WHEN tbl IS NULL THEN NULL
         WHEN typeof(tbl) <> 'VARCHAR'
         THEN (SELECT r.k_oid FROM @C@.pgb.k_rels r WHERE r.k_oid = TRY_CAST(tbl AS BIGINT))
         ELSE coalesce(@C@.pgcat.regclass_oid(CAST(tbl AS VARCHAR)),
                       @C@.pgb.fail('42P01', 'relation "' || CAST(tbl AS VARCHAR)
                                             || '" does not exist')) END;

CREATE MACRO @C@.pgb.nsp_ref(nsp) AS
    CASE WHEN nsp IS NULL THEN NULL
         WHEN typeof(nsp) <> 'VARCHAR'
         THEN (SELECT n.k_oid FROM @C@.pgb.k_nsps n WHERE n.k_oid = TRY_CAST(nsp AS BIGINT))
         ELSE coalesce(@C@.pgcat.regnamespace_oid(CAST(nsp AS VARCHAR)),
                       @C@.pgb.fail('3F000', 'schema "' || CAST(nsp AS VARCHAR)
                                             || '" does not exist')) END;

CREATE MACRO @C@.pgb.db_ref(db) AS
    CASE WHEN db IS NULL THEN NULL
         WHEN typeof(db) <> 'VARCHAR'
         THEN (SELECT d.oid FROM @C@.pgcat.pg_database d WHERE d.oid = TRY_CAST(db AS BIGINT))
         ELSE coalesce((SELECT d.oid FROM @C@.pgcat.pg_database d
                        WHERE d.datname = CAST(db AS VARCHAR)),
                       @C@.pgb.fail('3D000', 'database "' || CAST(db AS VARCHAR)
                                             || '" does not exist')) END;

-- a function by its signature text ('name(args)' or 'name'): by name, as DuckDB cannot
-- tell overloads apart by PostgreSQL's argument types; pg_proc's rows or any function or
-- macro DuckDB knows (pg_proc lists only some of them)
CREATE MACRO @C@.pgb.func_name(fn) AS
    lower(trim(split_part(regexp_replace(fn, '^\s*pg_catalog\.', ''), '(', 1)));
CREATE MACRO @C@.pgb.func_ref(fn) AS
    CASE WHEN fn IS NULL THEN NULL
         WHEN typeof(fn) <> 'VARCHAR'
         THEN (SELECT p.oid FROM @C@.pgcat.pg_proc p WHERE p.oid = TRY_CAST(fn AS BIGINT) LIMIT 1)
         WHEN EXISTS (SELECT 1 FROM @C@.pgcat.pg_proc p
                      WHERE p.proname = @C@.pgb.func_name(CAST(fn AS VARCHAR)))
              OR EXISTS (SELECT 1 FROM duckdb_functions() f
                         WHERE f.function_name = @C@.pgb.func_name(CAST(fn AS VARCHAR)))
         THEN 0
         ELSE @C@.pgb.fail('42883', 'function "' || CAST(fn AS VARCHAR)
                                    || '" does not exist') END;

CREATE MACRO @C@.pgb.col_ok(tbl, col) AS
    CASE WHEN @C@.pgb.rel_ref(tbl) IS NULL OR col IS NULL THEN NULL
         WHEN typeof(col) <> 'VARCHAR'
         THEN EXISTS (SELECT 1 FROM @C@.pgcat.pg_attribute a
                      WHERE a.attrelid = @C@.pgb.rel_ref(tbl)
                        AND a.attnum = TRY_CAST(col AS BIGINT) AND NOT a.attisdropped) OR NULL
         WHEN EXISTS (SELECT 1 FROM @C@.pgcat.pg_attribute a
                      WHERE a.attrelid = @C@.pgb.rel_ref(tbl) AND a.attname = CAST(col AS VARCHAR)
                        AND NOT a.attisdropped) THEN true
         ELSE @C@.pgb.fail('42703', 'column "' || CAST(col AS VARCHAR) || '" of relation "'
                                    || @C@.pgcat.regclass_name(@C@.pgb.rel_ref(tbl))
                                    || '" does not exist') END;

CREATE MACRO @C@.pgb.seq_ok(seq) AS
    CASE WHEN @C@.pgb.rel_ref(seq) IS NULL THEN NULL
         WHEN (SELECT c.relkind FROM @C@.pgcat.pg_class c WHERE c.oid = @C@.pgb.rel_ref(seq)) = 'S'
         THEN true
         ELSE @C@.pgb.fail('42809', '"' || CAST(seq AS VARCHAR) || '" is not a sequence') END;

-- the object first (a name that names nothing fails before a bad privilege word, as in
-- PostgreSQL), then the privilege word; NULL for an unknown OID
CREATE MACRO @C@.pgb.inquiry(found, priv, known) AS
    CASE WHEN found IS NULL THEN CASE WHEN @C@.pgb.privilege_ok(priv, known) THEN NULL END
         ELSE @C@.pgb.privilege_ok(priv, known) AND found END;

CREATE MACRO @C@.pgcat.has_table_privilege(tbl, priv) AS
    @C@.pgb.inquiry(@C@.pgb.rel_ref(tbl) IS NOT NULL OR NULL, priv,
                    ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']),
    (usr, tbl, priv) AS
    CASE WHEN @C@.pgb.is_public(usr)
         THEN @C@.pgcat.has_table_privilege(tbl, priv) AND @C@.pgb.public_has('table', tbl, priv)
         ELSE @C@.pgb.role_ok(usr) AND @C@.pgcat.has_table_privilege(tbl, priv) END;
CREATE MACRO @C@.pgcat.has_any_column_privilege(tbl, priv) AS
    @C@.pgb.inquiry(@C@.pgb.rel_ref(tbl) IS NOT NULL OR NULL, priv,
                    ['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']),
    (usr, tbl, priv) AS
    CASE WHEN @C@.pgb.is_public(usr)
         THEN @C@.pgcat.has_any_column_privilege(tbl, priv) AND @C@.pgb.public_has('table', tbl, priv)
         ELSE @C@.pgb.role_ok(usr) AND @C@.pgcat.has_any_column_privilege(tbl, priv) END;
CREATE MACRO @C@.pgcat.has_column_privilege(tbl, col, priv) AS
    @C@.pgb.inquiry(@C@.pgb.col_ok(tbl, col), priv, ['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']),
    (usr, tbl, col, priv) AS
    CASE WHEN @C@.pgb.is_public(usr)
         THEN @C@.pgcat.has_column_privilege(tbl, col, priv) AND @C@.pgb.public_has('column', tbl, priv)
         ELSE @C@.pgb.role_ok(usr) AND @C@.pgcat.has_column_privilege(tbl, col, priv) END;
CREATE MACRO @C@.pgcat.has_sequence_privilege(seq, priv) AS
    @C@.pgb.inquiry(@C@.pgb.seq_ok(seq), priv, ['USAGE', 'SELECT', 'UPDATE']),
    (usr, seq, priv) AS
    CASE WHEN @C@.pgb.is_public(usr)
         THEN @C@.pgcat.has_sequence_privilege(seq, priv) AND @C@.pgb.public_has('sequence', seq, priv)
         ELSE @C@.pgb.role_ok(usr) AND @C@.pgcat.has_sequence_privilege(seq, priv) END;
CREATE MACRO @C@.pgcat.has_schema_privilege(nsp, priv) AS
    @C@.pgb.inquiry(@C@.pgb.nsp_ref(nsp) IS NOT NULL OR NULL, priv, ['CREATE', 'USAGE']),
    (usr, nsp, priv) AS
    CASE WHEN @C@.pgb.is_public(usr)
         THEN @C@.pgcat.has_schema_privilege(nsp, priv) AND @C@.pgb.public_has('schema', nsp, priv)
         ELSE @C@.pgb.role_ok(usr) AND @C@.pgcat.has_schema_privilege(nsp, priv) END;
CREATE MACRO @C@.pgcat.has_database_privilege(db, priv) AS
    @C@.pgb.inquiry(@C@.pgb.db_ref(db) IS NOT NULL OR NULL, priv,
                    ['CREATE', 'CONNECT', 'TEMPORARY', 'TEMP']),
    (usr, db, priv) AS
    CASE WHEN @C@.pgb.is_public(usr)
         THEN @C@.pgcat.has_database_privilege(db, priv) AND @C@.pgb.public_has('database', db, priv)
         ELSE @C@.pgb.role_ok(usr) AND @C@.pgcat.has_database_privilege(db, priv) END;
CREATE MACRO @C@.pgcat.has_function_privilege(fn, priv) AS
    @C@.pgb.inquiry(@C@.pgb.func_ref(fn) IS NOT NULL OR NULL, priv, ['EXECUTE']),
    (usr, fn, priv) AS
    CASE WHEN @C@.pgb.is_public(usr)
         THEN @C@.pgcat.has_function_privilege(fn, priv) AND @C@.pgb.public_has('function', fn, priv)
         ELSE @C@.pgb.role_ok(usr) AND @C@.pgcat.has_function_privilege(fn, priv) END;

-- text cast to regclass / regtype / regnamespace (the rewrite's ::reg* of a name): the
-- OID (a number is one already, as PostgreSQL reads it), or PostgreSQL's error for a name
-- that names nothing (to_regclass & co. stay NULL)
CREATE MACRO @C@.pgcat.regclass_in(nm) AS
    coalesce(TRY_CAST(CASE WHEN regexp_full_match(trim(nm), '[0-9]+') THEN trim(nm) END AS BIGINT),
             @C@.pgcat.regclass_oid(nm),
             @C@.pgb.fail('42P01', 'relation "' || nm || '" does not exist'));
CREATE MACRO @C@.pgcat.regtype_in(nm) AS
    coalesce(TRY_CAST(CASE WHEN regexp_full_match(trim(nm), '[0-9]+') THEN trim(nm) END AS BIGINT),
             @C@.pgcat.regtype_oid(nm),
             @C@.pgb.fail('42704', 'type "' || nm || '" does not exist'));
CREATE MACRO @C@.pgcat.regnamespace_in(nm) AS
    coalesce(TRY_CAST(CASE WHEN regexp_full_match(trim(nm), '[0-9]+') THEN trim(nm) END AS BIGINT),
             @C@.pgcat.regnamespace_oid(nm),
             @C@.pgb.fail('3F000', 'schema "' || nm || '" does not exist'));
