"""Which start-up parameters a client may send: PostgreSQL 15's.

Rules this module keeps:

* PostgreSQL takes every configuration parameter (GUC) as a start-up parameter, plus
  ``user``, ``database``, ``options`` and ``replication``; any other name is FATAL 42704
  ``unrecognized configuration parameter "x"``, sent after AuthenticationOk as
  PostgreSQL does. Names are matched case-insensitively, as GUC names are.
* A name with a dot is a custom (extension) parameter, which PostgreSQL accepts as a
  placeholder: accepted here too.
* ``GUC_NAMES`` is the output of ``SELECT name FROM pg_settings`` on PostgreSQL 15.20
  (356 names), plus the settings pg_settings hides (``is_superuser``, ``role``, ``seed``,
  ``session_authorization``). Values are not checked here: the backend applies them
  (an upstream PostgreSQL validates and applies every one itself; DuckDB the ones
  pgbarrier emulates, :mod:`pgbarrier.backends.duckdb_settings`).
* pgbarrier's own settings (``batch_refresh_when_paused``, :mod:`pgbarrier.sql.setting`)
  are accepted as start-up parameters too, as ``SET`` accepts them.
* ``options`` is read as PostgreSQL reads it (``pg_split_opts``, then
  ``process_postgres_switches``): split on unescaped white space, a backslash escapes the
  next character; ``-c name=value``, ``-cname=value`` and ``--name=value`` set a
  parameter (dashes in the name become underscores); one without ``=value`` is FATAL
  42601 ``-c name requires a value``. Other switches of postgres' (``-e``, ``-B 8``...) are
  kept as ``switches`` for the backend to apply or refuse; a word that is none (``-z``,
  ``garbage``) is FATAL 42601 ``invalid command-line argument for server process``.
* :func:`startup_settings` is the one reading of a start-up packet's settings: the
  ``options`` ones first, then the explicit parameters, a later one replacing an earlier
  one of the same name (PostgreSQL applies ``options`` first, so an explicit parameter
  wins). :func:`options_text` writes them back as a libpq ``options`` string.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pgbarrier.errors import SyntaxError as PgSyntaxError
from pgbarrier.errors import UndefinedObject
from pgbarrier.sql.setting import OWN_SETTINGS

#: start-up parameters that are not GUCs (PostgreSQL's ProcessStartupPacket)
_PROTOCOL_NAMES = frozenset({"user", "database", "options", "replication"})
#: GUCs that pg_settings does not list (GUC_NO_SHOW_ALL)
_HIDDEN = frozenset({"is_superuser", "role", "seed", "session_authorization"})

GUC_NAMES = frozenset({
    'DateStyle', 'IntervalStyle', 'TimeZone', 'allow_in_place_tablespaces',
    'allow_system_table_mods', 'application_name', 'archive_cleanup_command',
    'archive_command', 'archive_library', 'archive_mode', 'archive_timeout', 'array_nulls',
    'authentication_timeout', 'autovacuum', 'autovacuum_analyze_scale_factor',
    'autovacuum_analyze_threshold', 'autovacuum_freeze_max_age', 'autovacuum_max_workers',
    'autovacuum_multixact_freeze_max_age', 'autovacuum_naptime',
    'autovacuum_vacuum_cost_delay', 'autovacuum_vacuum_cost_limit',
    'autovacuum_vacuum_insert_scale_factor', 'autovacuum_vacuum_insert_threshold',
    'autovacuum_vacuum_scale_factor', 'autovacuum_vacuum_threshold', 'autovacuum_work_mem',
    'backend_flush_after', 'backslash_quote', 'backtrace_functions', 'bgwriter_delay',
    'bgwriter_flush_after', 'bgwriter_lru_maxpages', 'bgwriter_lru_multiplier', 'block_size',
    'bonjour', 'bonjour_name', 'bytea_output', 'check_function_bodies',
    'checkpoint_completion_target', 'checkpoint_flush_after', 'checkpoint_timeout',
    'checkpoint_warning', 'client_connection_check_interval', 'client_encoding',
    'client_min_messages', 'cluster_name', 'commit_delay', 'commit_siblings',
    'composite_type_mismatch', 'compute_query_id', 'config_file', 'constraint_exclusion',
    'cpu_index_tuple_cost', 'cpu_operator_cost', 'cpu_tuple_cost', 'cursor_tuple_fraction',
    'data_checksums', 'data_directory', 'data_directory_mode', 'data_sync_retry',
    'db_user_namespace', 'deadlock_timeout', 'debug_assertions', 'debug_discard_caches',
    'debug_pretty_print', 'debug_print_parse', 'debug_print_plan', 'debug_print_rewritten',
    'default_statistics_target', 'default_table_access_method', 'default_tablespace',
    'default_text_search_config', 'default_toast_compression',
    'default_transaction_deferrable', 'default_transaction_isolation',
    'default_transaction_read_only', 'dynamic_library_path', 'dynamic_shared_memory_type',
    'effective_cache_size', 'effective_io_concurrency', 'enable_async_append',
    'enable_bitmapscan', 'enable_gathermerge', 'enable_hashagg', 'enable_hashjoin',
    'enable_incremental_sort', 'enable_indexonlyscan', 'enable_indexscan', 'enable_material',
    'enable_memoize', 'enable_mergejoin', 'enable_nestloop', 'enable_parallel_append',
    'enable_parallel_hash', 'enable_partition_pruning', 'enable_partitionwise_aggregate',
    'enable_partitionwise_join', 'enable_seqscan', 'enable_sort', 'enable_tidscan',
    'escape_string_warning', 'event_source', 'exit_on_error', 'extension_destdir',
    'external_pid_file', 'extra_float_digits', 'force_parallel_mode', 'from_collapse_limit',
    'fsync', 'full_page_writes', 'geqo', 'geqo_effort', 'geqo_generations', 'geqo_pool_size',
    'geqo_seed', 'geqo_selection_bias', 'geqo_threshold', 'gin_fuzzy_search_limit',
    'gin_pending_list_limit', 'hash_mem_multiplier', 'hba_file', 'hot_standby',
    'hot_standby_feedback', 'huge_page_size', 'huge_pages', 'ident_file',
    'idle_in_transaction_session_timeout', 'idle_session_timeout', 'ignore_checksum_failure',
    'ignore_invalid_pages', 'ignore_system_indexes', 'in_hot_standby', 'integer_datetimes',
    'jit', 'jit_above_cost', 'jit_debugging_support', 'jit_dump_bitcode', 'jit_expressions',
    'jit_inline_above_cost', 'jit_optimize_above_cost', 'jit_profiling_support',
    'jit_provider', 'jit_tuple_deforming', 'join_collapse_limit', 'krb_caseins_users',
    'krb_server_keyfile', 'lc_collate', 'lc_ctype', 'lc_messages', 'lc_monetary', 'lc_numeric',
    'lc_time', 'listen_addresses', 'lo_compat_privileges', 'local_preload_libraries',
    'lock_timeout', 'log_autovacuum_min_duration', 'log_checkpoints', 'log_connections',
    'log_destination', 'log_directory', 'log_disconnections', 'log_duration',
    'log_error_verbosity', 'log_executor_stats', 'log_file_mode', 'log_filename',
    'log_hostname', 'log_line_prefix', 'log_lock_waits', 'log_min_duration_sample',
    'log_min_duration_statement', 'log_min_error_statement', 'log_min_messages',
    'log_parameter_max_length', 'log_parameter_max_length_on_error', 'log_parser_stats',
    'log_planner_stats', 'log_recovery_conflict_waits', 'log_replication_commands',
    'log_rotation_age', 'log_rotation_size', 'log_startup_progress_interval', 'log_statement',
    'log_statement_sample_rate', 'log_statement_stats', 'log_temp_files', 'log_timezone',
    'log_transaction_sample_rate', 'log_truncate_on_rotation', 'logging_collector',
    'logical_decoding_work_mem', 'maintenance_io_concurrency', 'maintenance_work_mem',
    'max_connections', 'max_files_per_process', 'max_function_args', 'max_identifier_length',
    'max_index_keys', 'max_locks_per_transaction', 'max_logical_replication_workers',
    'max_parallel_maintenance_workers', 'max_parallel_workers',
    'max_parallel_workers_per_gather', 'max_pred_locks_per_page',
    'max_pred_locks_per_relation', 'max_pred_locks_per_transaction',
    'max_prepared_transactions', 'max_replication_slots', 'max_slot_wal_keep_size',
    'max_stack_depth', 'max_standby_archive_delay', 'max_standby_streaming_delay',
    'max_sync_workers_per_subscription', 'max_wal_senders', 'max_wal_size',
    'max_worker_processes', 'min_dynamic_shared_memory', 'min_parallel_index_scan_size',
    'min_parallel_table_scan_size', 'min_wal_size', 'old_snapshot_threshold',
    'output_plugin_libraries', 'parallel_leader_participation', 'parallel_setup_cost',
    'parallel_tuple_cost', 'password_encryption', 'plan_cache_mode', 'port', 'post_auth_delay',
    'pre_auth_delay', 'primary_conninfo', 'primary_slot_name', 'promote_trigger_file',
    'quote_all_identifiers', 'random_page_cost', 'recovery_end_command',
    'recovery_init_sync_method', 'recovery_min_apply_delay', 'recovery_prefetch',
    'recovery_target', 'recovery_target_action', 'recovery_target_inclusive',
    'recovery_target_lsn', 'recovery_target_name', 'recovery_target_time',
    'recovery_target_timeline', 'recovery_target_xid', 'recursive_worktable_factor',
    'remove_temp_files_after_crash', 'restart_after_crash', 'restore_command',
    'restrict_nonsystem_relation_kind', 'row_security', 'search_path', 'segment_size',
    'seq_page_cost', 'server_encoding', 'server_version', 'server_version_num',
    'session_preload_libraries', 'session_replication_role', 'shared_buffers',
    'shared_memory_size', 'shared_memory_size_in_huge_pages', 'shared_memory_type',
    'shared_preload_libraries', 'ssl', 'ssl_ca_file', 'ssl_cert_file', 'ssl_ciphers',
    'ssl_crl_dir', 'ssl_crl_file', 'ssl_dh_params_file', 'ssl_ecdh_curve', 'ssl_key_file',
    'ssl_library', 'ssl_max_protocol_version', 'ssl_min_protocol_version',
    'ssl_passphrase_command', 'ssl_passphrase_command_supports_reload',
    'ssl_prefer_server_ciphers', 'standard_conforming_strings', 'statement_timeout',
    'stats_fetch_consistency', 'superuser_reserved_connections', 'synchronize_seqscans',
    'synchronous_commit', 'synchronous_standby_names', 'syslog_facility', 'syslog_ident',
    'syslog_sequence_numbers', 'syslog_split_messages', 'tcp_keepalives_count',
    'tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_user_timeout', 'temp_buffers',
    'temp_file_limit', 'temp_tablespaces', 'timezone_abbreviations', 'trace_notify',
    'trace_recovery_messages', 'trace_sort', 'track_activities', 'track_activity_query_size',
    'track_commit_timestamp', 'track_counts', 'track_functions', 'track_io_timing',
    'track_wal_io_timing', 'transaction_deferrable', 'transaction_isolation',
    'transaction_read_only', 'transform_null_equals', 'unix_socket_directories',
    'unix_socket_group', 'unix_socket_permissions', 'update_process_title',
    'vacuum_cost_delay', 'vacuum_cost_limit', 'vacuum_cost_page_dirty', 'vacuum_cost_page_hit',
    'vacuum_cost_page_miss', 'vacuum_defer_cleanup_age', 'vacuum_failsafe_age',
    'vacuum_freeze_min_age', 'vacuum_freeze_table_age', 'vacuum_multixact_failsafe_age',
    'vacuum_multixact_freeze_min_age', 'vacuum_multixact_freeze_table_age', 'wal_block_size',
    'wal_buffers', 'wal_compression', 'wal_consistency_checking', 'wal_decode_buffer_size',
    'wal_init_zero', 'wal_keep_size', 'wal_level', 'wal_log_hints',
    'wal_receiver_create_temp_slot', 'wal_receiver_status_interval', 'wal_receiver_timeout',
    'wal_recycle', 'wal_retrieve_retry_interval', 'wal_segment_size', 'wal_sender_timeout',
    'wal_skip_threshold', 'wal_sync_method', 'wal_writer_delay', 'wal_writer_flush_after',
    'work_mem', 'xmlbinary', 'xmloption', 'zero_damaged_pages'
}) | _HIDDEN
_LOWER = frozenset(n.lower() for n in GUC_NAMES) | OWN_SETTINGS
#: getopt switches of PostgreSQL's ``process_postgres_switches`` that take an argument
_WITH_ARGUMENT = frozenset("BCDdfhkNprStvW")
#: every switch letter of postgres' getopt string (PostgreSQL 15's process_postgres_switches)
_SWITCHES = frozenset("BbcCDdEeFfhijklNnOPprSsTtvW")


@dataclass(frozen=True)
class StartupSettings:
    """The settings a start-up packet asks for, in the order PostgreSQL applies them."""

    #: lower-case name -> (name as the client spelled it, value); later ones replaced earlier
    values: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: ``options`` switches other than ``-c``/``--`` (each one token, its argument apart)
    switches: tuple[str, ...] = ()

    def get(self, name: str, default: str | None = None) -> str | None:
        item = self.values.get(name.lower())
        return default if item is None else item[1]

    def items(self) -> list[tuple[str, str]]:
        return list(self.values.values())


def split_options(options: str) -> list[str]:
    """PostgreSQL's ``pg_split_opts``: white space separates, a backslash escapes."""
    out: list[str] = []
    i, n = 0, len(options)
    while i < n:
        while i < n and options[i].isspace():
            i += 1
        if i >= n:
            break
        token: list[str] = []
        escape = False
        while i < n and (escape or not options[i].isspace()):
            if not escape and options[i] == "\\":
                escape = True
            else:
                escape = False
                token.append(options[i])
            i += 1
        out.append("".join(token))
    return out


def _escape(token: str) -> str:
    """The inverse of :func:`split_options` for one token."""
    return "".join("\\" + c if c.isspace() or c == "\\" else c for c in token)


def options_text(settings: list[tuple[str, str]], switches: tuple[str, ...] = ()) -> str:
    """A libpq ``options`` string asking for ``switches`` then ``-c name=value`` each."""
    parts = [_escape(t) for t in switches]
    parts += [f"-c {_escape(f'{name}={value}')}" for name, value in settings]
    return " ".join(parts)


def _check_name(name: str) -> None:
    if name.lower() not in _LOWER and "." not in name:
        raise UndefinedObject(f'unrecognized configuration parameter "{name}"', severity="FATAL")


def _long_option(arg: str, prefix: str) -> tuple[str, str]:
    """``ParseLongOption``: ``name=value``, dashes in the name read as underscores."""
    name, eq, value = arg.partition("=")
    if not eq:
        raise PgSyntaxError(f"{prefix}{arg} requires a value", severity="FATAL")
    return name.replace("-", "_"), value


def _bad_argument(token: str) -> PgSyntaxError:
    """PostgreSQL's FATAL 42601 for an ``options`` word its getopt refuses."""
    return PgSyntaxError(f"invalid command-line argument for server process: {token}",
                         severity="FATAL", hint='Try "postgres --help" for more information.')


def startup_settings(parameters: dict[str, str]) -> StartupSettings:
    """The settings of a start-up packet (module rules); FATAL 42704 for a name PostgreSQL
    15 does not know, FATAL 42601 for an ``options`` setting without a value."""
    values: dict[str, tuple[str, str]] = {}
    switches: list[str] = []
    tokens = split_options(parameters.get("options") or "")
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok == "--":  # getopt's end of the switches: nothing may follow
            if i < len(tokens):
                raise _bad_argument(tokens[i])
            break
        if tok.startswith("--"):
            name, value = _long_option(tok[2:], "--")
        elif tok.startswith("-c"):
            arg = tok[2:]
            if not arg:
                if i >= len(tokens):  # getopt: -c without its argument
                    raise _bad_argument(tok)
                arg = tokens[i]
                i += 1
            name, value = _long_option(arg, "-c ")
        else:
            if tok[:1] != "-" or len(tok) < 2 or tok[1] not in _SWITCHES:
                # getopt stops at a word that is no switch of postgres', or refuses one
                raise _bad_argument(tok)
            switches.append(tok)
            if tok[:1] == "-" and len(tok) == 2 and tok[1] in _WITH_ARGUMENT and i < len(tokens):
                switches.append(tokens[i])
                i += 1
            continue
        _check_name(name)
        values.pop(name.lower(), None)
        values[name.lower()] = (name, value)
    for name, value in parameters.items():
        if name.lower() in _PROTOCOL_NAMES:
            continue
        _check_name(name)
        values.pop(name.lower(), None)
        values[name.lower()] = (name, value)
    return StartupSettings(values, tuple(switches))


def check_startup_parameters(parameters: dict[str, str]) -> None:
    """Raise the FATAL error PostgreSQL 15 gives for the first start-up parameter (or
    ``options`` setting) it would not take."""
    startup_settings(parameters)
