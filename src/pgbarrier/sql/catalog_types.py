"""PostgreSQL types of a catalog query's output columns that DuckDB cannot carry.

Rules this module keeps:

* DuckDB has no ``name``, ``oid``, ``"char"``, ``regproc``, ``pg_node_tree``, ``xid``,
  ``aclitem`` or vector types: the emulated catalog holds their values as text, integers
  and lists. :func:`column_types` tells, for the top-level select list of a catalog query
  as the client wrote it, which output columns PostgreSQL would type so: catalog columns
  by their (unique) names, followed through aliases, derived tables, CTEs, scalar subqueries,
  ``CASE``, ``ARRAY(...)``, ``array_agg`` and ``unnest``; ``reg*`` casts; and the few
  functions returning ``name``. The DuckDB session relabels those columns when the values
  DuckDB produced can carry the type.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.sql.colnames import figure_colname, first_select, type_name
from pgbarrier.pgproto import types as pgt

# PostgreSQL catalog columns whose types DuckDB has no twin for (text and BIGINT there)
_NAME_COLS = {"relname", "nspname", "attname", "typname", "datname", "conname", "rolname",
              "proname", "amname", "collname", "extname", "spcname", "usename", "polname",
              "stxname", "pubname", "tgname", "enumlabel", "schemaname", "tablename",
              "viewname", "indexname", "matviewname", "tableowner", "viewowner", "lanname",
              "oprname", "opcname", "opfname", "indexrelname", "evtname",
              "fdwname", "srvname", "tgoldtable", "tgnewtable", "evtevent",
              "sequencename", "sequenceowner", "policyname", "rulename"}
_OID_COLS = {"oid", "relnamespace", "reltype", "reloftype", "relowner", "relam", "relfilenode",
             "reltablespace", "reltoastrelid", "attrelid", "atttypid", "attcollation",
             "typnamespace", "typowner", "typrelid", "typelem", "typarray", "typbasetype",
             "typcollation", "indexrelid", "indrelid", "conrelid", "confrelid", "connamespace",
             "conindid", "contypid", "conparentid", "objoid", "classoid", "nspowner", "datdba",
             "adrelid", "pronamespace", "prorettype", "proowner", "prolang", "collnamespace",
             "collowner", "extowner", "extnamespace", "spcowner", "dattablespace", "roleid",
             "member", "grantor", "inhrelid", "inhparent", "enumtypid", "polrelid",
             "stxrelid", "stxnamespace", "usesysid", "amhandler_oid", "relid",
             "opcmethod", "opcnamespace", "opcowner", "opcfamily", "opcintype", "opckeytype",
             "seqrelid", "seqtypid", "tgrelid", "tgparentid", "tgfoid", "tableoid",
             "castsource", "casttarget", "castfunc", "lanowner", "lanplcallfoid", "laninline",
             "lanvalidator", "oprnamespace", "oprowner", "oprleft", "oprright", "oprresult",
             "opfmethod", "opfnamespace", "opfowner", "ev_class", "datid", "classid", "objid",
             "refclassid", "refobjid", "relation", "database", "tgconstrrelid", "tgconstrindid",
             "tgconstraint", "defaclrole", "defaclnamespace", "provariadic", "fdwowner",
             "fdwhandler", "fdwvalidator", "srvowner", "srvfdw", "evtowner", "evtfoid",
             "aggsortop", "aggtranstype", "aggmtranstype"}
_CHAR_COLS = {"relkind", "relpersistence", "relreplident", "contype", "typtype",
              "typcategory", "attidentity", "attgenerated", "attstorage", "attalign",
              "amtype", "prokind", "provolatile", "proparallel", "confupdtype", "confdeltype",
              "confmatchtype", "typalign", "typstorage", "typdelim", "datlocprovider",
              "polcmd", "collprovider", "deptype", "attcompression", "castcontext",
              "castmethod", "oprkind", "evtenabled", "tgenabled", "aggkind", "ev_type", "ev_enabled",
              "aggfinalmodify", "aggmfinalmodify",
              "defaclobjtype"}
_REGPROC_COLS = {"typinput", "typoutput", "typreceive", "typsend", "typmodin", "typmodout",
                 "typanalyze", "amhandler", "prosupport", "aggfnoid", "aggtransfn",
                 "aggfinalfn", "aggcombinefn", "aggserialfn", "aggdeserialfn", "aggmtransfn",
                 "aggminvtransfn", "aggmfinalfn"}
_XID_COLS = {"datfrozenxid", "datminmxid", "relfrozenxid", "relminmxid", "transactionid",
             "backend_xid", "backend_xmin"}
_ACL_COLS = {"nspacl", "relacl", "datacl", "attacl", "typacl", "proacl", "spcacl", "defaclacl",
             "lanacl", "fdwacl", "srvacl"}
_OID_ARRAY_COLS = {"conpfeqop", "conppeqop", "conffeqop", "conexclop", "proallargtypes",
                   "polroles", "extconfig", "protrftypes"}
#: information_schema's sql_identifier columns (a domain over name: sent as name) and its
#: character_data / yes_or_no ones (domains over varchar: sent as varchar)
_SQL_IDENTIFIER_COLS = {
    "catalog_name", "character_set_catalog", "character_set_name", "character_set_schema",
    "collation_catalog", "collation_name", "collation_schema", "column_name",
    "constraint_catalog", "constraint_name", "constraint_schema",
    "default_character_set_catalog", "default_character_set_name",
    "default_character_set_schema", "domain_catalog", "domain_name", "domain_schema",
    "dtd_identifier", "schema_name", "schema_owner", "scope_catalog", "scope_name",
    "scope_schema", "self_referencing_column_name", "table_catalog", "table_name",
    "table_schema", "udt_catalog", "udt_name", "udt_schema", "user_defined_type_catalog",
    "user_defined_type_name", "user_defined_type_schema", "specific_catalog",
    "specific_schema", "specific_name", "routine_catalog", "routine_schema", "routine_name",
    "unique_constraint_catalog", "unique_constraint_schema", "unique_constraint_name",
    "sequence_catalog", "sequence_schema", "sequence_name", "grantee",
    "trigger_catalog", "trigger_schema", "trigger_name", "event_object_catalog",
    "event_object_schema", "event_object_table", "action_reference_old_table",
    "action_reference_new_table", "action_reference_old_row", "action_reference_new_row"}
_CHARACTER_DATA_COLS = {
    "check_option", "column_default", "commit_action", "constraint_type", "data_type",
    "enforced", "generation_expression", "identity_cycle", "identity_generation",
    "identity_increment", "identity_maximum", "identity_minimum", "identity_start",
    "initially_deferred", "interval_type", "is_deferrable", "is_generated", "is_identity",
    "is_insertable_into", "is_nullable", "is_self_referencing", "is_trigger_deletable",
    "is_trigger_insertable_into", "is_trigger_updatable", "is_typed", "is_updatable",
    "nulls_distinct", "reference_generation", "routine_type", "sql_path", "table_type",
    "view_definition", "match_option", "update_rule", "delete_rule", "check_clause",
    "start_value", "minimum_value", "maximum_value", "increment", "cycle_option",
    "privilege_type", "is_grantable", "with_hierarchy", "event_manipulation",
    "action_condition", "action_statement", "action_orientation", "action_timing"}
_VECTOR_COLS = {"indkey": 22, "indoption": 22, "indcollation": 30, "indclass": 30,
                "proargtypes": 30, "tgattr": 22}
COLUMN_TYPES: dict[str, int] = {
    **{c: 28 for c in _XID_COLS}, **{c: 1034 for c in _ACL_COLS},
    **{c: 1028 for c in _OID_ARRAY_COLS}, **_VECTOR_COLS,
    **{c: 194 for c in ("typdefaultbin", "relpartbound", "indexprs", "indpred", "conbin",
                        "adbin", "polqual", "polwithcheck", "prqual", "proargdefaults",
                        "tgqual", "prosqlbody", "ev_qual", "ev_action")},
    "attmissingval": 2277,
    "typsubscript": 24, "relrewrite": pgt.OID, "proargmodes": 1002, "stxkind": 1002,
    "memberof": 1003, "roles": 1003,
    **{c: pgt.VARCHAR for c in _CHARACTER_DATA_COLS},
    **{c: pgt.NAME for c in _SQL_IDENTIFIER_COLS},
    **{c: pgt.NAME for c in _NAME_COLS}, **{c: pgt.OID for c in _OID_COLS},
    **{c: pgt.CHAR for c in _CHAR_COLS}, **{c: 24 for c in _REGPROC_COLS},
}

#: columns whose name another catalog relation types differently: their type in this one
RELATION_COLUMN_TYPES: dict[str, dict[str, int]] = {
    "pg_sequences": {"data_type": 2206}, "pg_available_extensions": {"name": pgt.NAME},
    "table_privileges": {"grantor": pgt.NAME}, "routine_privileges": {"grantor": pgt.NAME},
    "column_privileges": {"grantor": pgt.NAME}, "usage_privileges": {"grantor": pgt.NAME},
}

_REG_OUTPUT = {"regclass": 2205, "regtype": 2206, "regnamespace": 4089, "regproc": 24}
_NAME_FUNCS = (exp.CurrentSchema, exp.CurrentUser, exp.SessionUser, exp.CurrentDatabase)
#: result types of emulated functions that DuckDB cannot type
_FUNC_TYPES = {"pg_get_userbyid": pgt.NAME, "current_schema": pgt.NAME,
               "pg_encoding_to_char": pgt.NAME, "pg_client_encoding": pgt.NAME}


def _derived_types(select: exp.Select) -> dict[tuple[str, str], int]:
    """(alias, column) -> catalog type, for the derived tables in ``select``'s FROM/JOINs."""
    found: dict[tuple[str, str], int] = {}
    sources = [select.args.get("from_") or select.args.get("from")]
    sources += [j for j in select.args.get("joins") or []]
    with_ = select.args.get("with_") or select.args.get("with")
    ctes = {c.alias.lower(): c.this for c in (with_.expressions if with_ else [])
            if isinstance(c, exp.CTE) and c.alias}
    for source in sources:
        sub = source.this if source is not None else None
        if isinstance(sub, exp.Table) and sub.name.lower() in RELATION_COLUMN_TYPES:
            alias = (sub.alias or sub.name).lower()
            for name, oid in RELATION_COLUMN_TYPES[sub.name.lower()].items():
                found[(alias, name)] = oid
                if len(sources) == 1:  # unqualified columns can only be this relation's
                    found[("", name)] = oid
        if isinstance(sub, exp.Table) and not sub.args.get("db") and \
                sub.name.lower() in ctes:  # a CTE: typed as its query
            inner = first_select(ctes[sub.name.lower()])
            if inner is not None:
                for (name, oid) in column_types(inner).items():
                    found[((sub.alias or sub.name).lower(), name)] = oid
            continue
        if not isinstance(sub, exp.Subquery) or not sub.alias:
            continue
        inner = first_select(sub.this)
        if inner is None:
            continue
        for (name, oid) in column_types(inner).items():
            found[(sub.alias.lower(), name)] = oid
    return found


def _catalog_type(node: exp.Expr | None, derived: dict[tuple[str, str], int]) -> int | None:
    """The PostgreSQL type of a select-list expression when it is a catalog type DuckDB
    cannot carry (name, oid, "char"...), followed through aliases, derived tables,
    subqueries, CASE, ARRAY(...), array_agg and unnest; None when unknown."""
    if isinstance(node, (exp.Alias, exp.Paren)):
        return _catalog_type(node.this, derived)
    if isinstance(node, exp.Column):
        by_alias = derived.get((node.table.lower(), node.name.lower()))
        return by_alias if by_alias is not None else COLUMN_TYPES.get(node.name)
    if isinstance(node, _NAME_FUNCS):
        return pgt.NAME
    if isinstance(node, exp.CurrentSchemas):
        return pgt.ARRAY_OF[pgt.NAME]
    if isinstance(node, exp.Cast):
        return _REG_OUTPUT.get(type_name(node.args["to"]) or "")
    func = node.expression if isinstance(node, exp.Dot) else node
    if isinstance(func, exp.Anonymous):
        return _FUNC_TYPES.get(func.name.lower())
    if isinstance(node, exp.Subquery):
        inner = first_select(node.this)
        if inner is None or not inner.expressions:
            return None
        return _catalog_type(inner.expressions[0], _derived_types(inner))
    if isinstance(node, exp.Case):
        branches = [i.args.get("true") for i in node.args.get("ifs") or []]
        branches.append(node.args.get("default"))
        for branch in branches:
            if branch is not None and not isinstance(branch, exp.Null):
                return _catalog_type(branch, derived)
        return None
    if isinstance(node, (exp.Array, exp.ArrayAgg)):
        parts = node.expressions if isinstance(node, exp.Array) else [node.this]
        element = parts[0] if len(parts) == 1 else None
        if isinstance(element, exp.Select):
            element = exp.Subquery(this=element.copy())
        if isinstance(element, exp.Order):  # array_agg(x ORDER BY y)
            element = element.this
        elem = _catalog_type(element, derived) if element is not None else None
        return pgt.ARRAY_OF.get(elem) if elem is not None else None
    if isinstance(node, (exp.Unnest, exp.Explode)):
        parts = node.expressions if isinstance(node, exp.Unnest) else [node.this]
        array = _catalog_type(parts[0], derived) if len(parts) == 1 else None
        return pgt.ELEMENT_OF.get(array) if array is not None else None
    return None


def column_types(select: exp.Select) -> dict[str, int]:
    types: dict[str, int] = {}
    derived = _derived_types(select)
    for item in select.expressions:
        out = item.alias if isinstance(item, exp.Alias) else (figure_colname(item) or "")
        target = item.this if isinstance(item, exp.Alias) else item
        if isinstance(target, exp.Star) or (
                isinstance(target, exp.Column) and isinstance(target.this, exp.Star)):
            types.update(COLUMN_TYPES)
            types.update({name: oid for (_, name), oid in derived.items()})
            types.update(_function_table_types(select))
            continue
        oid = _catalog_type(target, derived)
        if oid is not None:
            types[out] = oid
    return types


def _function_table_types(select: exp.Select) -> dict[str, int]:
    """``SELECT * FROM unnest(current_schemas(true))``: the table function's column."""
    source = select.args.get("from_") or select.args.get("from")
    table = source.this if source is not None else None
    if isinstance(table, exp.Table) and isinstance(table.this, (exp.Unnest, exp.Explode)) \
            and not table.alias:
        oid = _catalog_type(table.this, {})
        if oid is not None:
            return {"unnest": oid}
    if isinstance(table, exp.Table) and isinstance(table.this, exp.CurrentSchemas) \
            and not table.alias:
        return {"current_schemas": pgt.ARRAY_OF[pgt.NAME]}
    if isinstance(table, exp.Unnest) and not table.alias:
        oid = _catalog_type(table, {})
        if oid is not None:
            return {"unnest": oid}
    return {}
