"""PostgreSQL client settings that DuckDB does not have, kept per session.

Clients send ``SET application_name``, ``extra_float_digits``, ``DateStyle``... at
connect and expect ``SHOW`` to answer. DuckDB rejects them, so pgbarrier keeps
them here. Rules this module keeps:

* Only values pgbarrier really honours are accepted: UTF8, ISO dates, the
  postgres interval style, hex bytea, standard strings on; anything else
  is 22023 with a DETAIL saying why. ``TimeZone`` takes any zone DuckDB's ICU
  knows and is applied to the session's DuckDB connection (``timestamptz`` values
  print in it, as in PostgreSQL); a zone DuckDB rejects is 22023. ``search_path`` is remembered, not applied.
* ``server_version`` and friends answer ``SHOW``; ``SET`` on them is 55P02.
* Start-up settings (a start-up parameter or ``options``' ``-c name=value``) are taken by
  :meth:`ClientSettings.apply_startup` exactly as ``SET`` takes them, so a value
  pgbarrier cannot honour is the session's FATAL 22023 instead of being dropped:
  ``client_encoding`` other than UTF8 (or SQL_ASCII, which converts nothing, as in
  PostgreSQL) is ``invalid value for parameter "client_encoding": "LATIN1"`` (DETAIL
  ``pgbarrier speaks UTF8 only.``), a DateStyle other than ISO is refused likewise. Names
  DuckDB sessions do not keep are ignored, and ``options`` switches other than ``-c`` /
  ``--`` are 0A000.
* Transaction isolation (``SET [SESSION CHARACTERISTICS AS] TRANSACTION ISOLATION
  LEVEL``, ``transaction_isolation``, ``default_transaction_isolation``) accepts
  PostgreSQL's four levels and reports what was set (default ``read committed``);
  DuckDB runs every transaction under snapshot isolation, which gives at least what
  read committed and repeatable read promise. Read-only transactions are refused
  (0A000): pgbarrier cannot enforce them. ``client_min_messages`` and ``lock_timeout``
  are remembered (DuckDB never waits for a lock: a conflict fails at once).
* A change to a reported setting comes back in ``Result.parameter_status`` so
  the session sends ParameterStatus.
* A session keeps only the values it set (the defaults are shared): thousands of idle
  sessions each held a copy of every default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pgbarrier.errors import InvalidParameterValue, PgError
from pgbarrier.result import Column, Result, command, rowset
from pgbarrier.sql.setting import SettingStatement, unquote
from pgbarrier.pgproto import types as pgt

if TYPE_CHECKING:
    from pgbarrier.sql.startup_params import StartupSettings

_UTC_NAMES = {n.lower(): n for n in ("UTC", "Etc/UTC", "GMT", "Etc/GMT", "UCT", "Etc/UCT",
                                       "Zulu", "Etc/Zulu", "Universal", "Etc/Universal",
                                       "Greenwich", "Etc/Greenwich", "GMT0", "Etc/GMT0",
                                       "GMT+0", "GMT-0", "Etc/GMT+0", "Etc/GMT-0", "Z")}
_TRUE = ("on", "true", "yes", "1", "t", "y")
_ORDERS = {"mdy": "MDY", "us": "MDY", "noneuro": "MDY", "noneuropean": "MDY",
           "dmy": "DMY", "euro": "DMY", "european": "DMY", "ymd": "YMD"}
#: canonical names of the client settings kept here, and their defaults
_DEFAULTS = {
    "application_name": "", "extra_float_digits": "1", "client_encoding": "UTF8",
    "DateStyle": "ISO, MDY", "IntervalStyle": "postgres", "TimeZone": "UTC",
    "standard_conforming_strings": "on", "bytea_output": "hex", "search_path": '"$user", public',
    "client_min_messages": "notice", "transaction_isolation": "read committed",
    "default_transaction_isolation": "read committed", "transaction_read_only": "off",
    "default_transaction_read_only": "off", "lock_timeout": "0",
}
_READ_ONLY = {"server_version": "15.0", "server_version_num": "150000",
              "server_encoding": "UTF8", "integer_datetimes": "on",
              "max_identifier_length": "63", "lc_collate": "C.UTF-8", "lc_ctype": "C.UTF-8",
              "is_superuser": "on", "block_size": "8192",
              "max_index_keys": "32", "max_function_args": "100"}
_ISOLATION = ("read uncommitted", "read committed", "repeatable read", "serializable")
_MESSAGE_LEVELS = ("debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice",
                   "warning", "error")
_REPORTED = frozenset({"application_name", "client_encoding", "DateStyle", "IntervalStyle",
                       "TimeZone", "standard_conforming_strings"})
#: the reported ones in the order they are announced
_REPORTED_ORDER = tuple(n for n in _DEFAULTS if n in _REPORTED)
_CANONICAL = {n.lower(): n for n in (*_DEFAULTS, *_READ_ONLY)}


def _bad_value(name: str, value: str, detail: str | None = None) -> PgError:
    return InvalidParameterValue(f'invalid value for parameter "{name}": "{value}"', detail=detail)


def _check_setting(name: str, raw: str) -> str:
    """The value PostgreSQL would store for ``SET name = raw`` (22023 if pgbarrier cannot)."""
    if name == "search_path":
        items = [x.strip() for x in raw.split(",")] if raw.strip() else []
        return ", ".join(items)
    value = unquote(raw)
    low = value.strip().lower()
    if name == "application_name":
        return "".join(c if 32 <= ord(c) < 127 else "?" for c in value)[:63]
    if name == "extra_float_digits":
        try:
            n = int(value)
        except ValueError:
            raise InvalidParameterValue(
                f'invalid value for parameter "{name}": "{value}"') from None
        if not -15 <= n <= 3:
            raise InvalidParameterValue(
                f'{n} is outside the valid range for parameter "{name}" (-15 .. 3)')
        return str(n)
    if name == "client_encoding":
        if low in ("utf8", "utf-8", "unicode"):
            return "UTF8"
        if low in ("sql_ascii", "sqlascii"):
            return "SQL_ASCII"  # no conversion, as PostgreSQL between SQL_ASCII and UTF8
        raise _bad_value(name, value, "pgbarrier speaks UTF8 only.")
    if name == "TimeZone":
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]  # SET TIME ZONE "Asia/Shanghai" (pgcli)
        return _UTC_NAMES.get(value.lower(), value)  # DuckDB judges the rest
    if name == "DateStyle":
        order = None
        for part in (p.strip().lower() for p in value.split(",")):
            if part == "iso":
                continue
            if part in _ORDERS:
                order = _ORDERS[part]
            elif part in ("sql", "postgres", "german"):
                raise _bad_value(name, value, "pgbarrier prints dates in the ISO style only.")
            else:
                raise _bad_value(name, value)
        return "ISO, " + (order or "MDY")
    if name == "IntervalStyle":
        if low == "postgres":
            return "postgres"
        raise _bad_value(name, value, "pgbarrier prints intervals in the postgres style only.")
    if name == "standard_conforming_strings":
        if low in _TRUE:
            return "on"
        raise _bad_value(name, value, "pgbarrier on DuckDB keeps standard_conforming_strings on.")
    if name == "bytea_output":
        if low == "hex":
            return "hex"
        raise _bad_value(name, value, "pgbarrier prints bytea in hex only.")
    if name in ("transaction_isolation", "default_transaction_isolation"):
        level = " ".join(low.split())
        if level in _ISOLATION:
            return level
        raise _bad_value(name, value)
    if name in ("transaction_read_only", "default_transaction_read_only"):
        if low in ("off", "false", "no", "0", "f", "n"):
            return "off"
        raise PgError("read-only transactions are not supported by pgbarrier on DuckDB",
                      sqlstate="0A000")
    if name == "client_min_messages":
        if low in _MESSAGE_LEVELS:
            return low
        raise _bad_value(name, value)
    if name == "lock_timeout":
        return value
    raise AssertionError(name)


class ClientSettings:
    """One session's PostgreSQL client settings."""

    def __init__(self, on_reset_all: Callable[[], None] = lambda: None,
                 set_timezone: Callable[[str], None] | None = None) -> None:
        #: the values this session set (one that went back to its default may stay)
        self._set: dict[str, str] = {}
        self._on_reset_all = on_reset_all
        self._set_timezone = set_timezone

    @property
    def settings(self) -> dict[str, str]:
        """Every setting kept here and its value now (a copy)."""
        return {**_DEFAULTS, **self._set}

    def get(self, name: str) -> str:
        """The value now of canonical setting ``name`` (kept here or read-only)."""
        value = self._set.get(name)
        return value if value is not None else _DEFAULTS.get(name, _READ_ONLY.get(name, ""))

    def _apply_timezone(self, zone: str) -> None:
        if zone in _UTC_NAMES.values() and self._set_timezone is None:
            return
        if self._set_timezone is None:
            raise _bad_value("TimeZone", zone, "this session can only run in UTC.")
        try:
            self._set_timezone(zone)
        except Exception:  # noqa: BLE001 - DuckDB does not know the zone
            raise _bad_value("TimeZone", zone) from None

    def apply_startup(self, startup: StartupSettings) -> None:
        """The client's start-up settings, each taken as ``SET name = value`` is (module
        rules); names not kept here are left alone, as before."""
        if startup.switches:
            raise PgError(f'options switch "{startup.switches[0]}" is not supported by '
                          "pgbarrier on DuckDB", sqlstate="0A000",
                          hint="Set parameters with -c name=value.")
        for name, value in startup.items():
            if name.lower() in _CANONICAL:
                self.handle(SettingStatement("SET", name, value))

    def reported(self) -> dict[str, str]:
        """The reported (ParameterStatus) settings kept here, as they are now."""
        return {n: self.get(n) for n in _REPORTED_ORDER}

    @staticmethod
    def shown(stmt: SettingStatement) -> str | None:
        """The canonical name ``SHOW`` answers for here, or None."""
        return _CANONICAL.get(stmt.name.lower()) if stmt.verb == "SHOW" else None

    def handle(self, stmt: SettingStatement) -> Result | None:
        """A SET/SHOW/RESET of a client setting kept here, else None (DuckDB's own)."""
        if stmt.verb == "SHOW":
            name = _CANONICAL.get(stmt.name.lower())
            if name is None:
                return None
            value = self.get(name)
            return rowset([Column(name, pgt.TEXT)], [(value,)], "SHOW")
        if stmt.verb == "RESET":
            if stmt.name.lower() == "all":
                changed = {n: v for n, v in _DEFAULTS.items() if self.get(n) != v}
                self._set.clear()
                self._on_reset_all()
                return self._changed("RESET", changed)
            name = _CANONICAL.get(stmt.name.lower())
            if name is None:
                return None
            if name in _READ_ONLY:
                raise PgError(f'parameter "{name}" cannot be changed', sqlstate="55P02")
            if name == "TimeZone":
                self._apply_timezone(_DEFAULTS[name])
            self._set.pop(name, None)
            return self._changed("RESET", {name: _DEFAULTS[name]})
        name = _CANONICAL.get(stmt.name.lower())
        if name is None:
            return None
        raw = stmt.value or ""
        if name in _READ_ONLY:
            raise PgError(f'parameter "{name}" cannot be changed', sqlstate="55P02")
        if raw.strip().lower() == "default" or (name == "TimeZone" and raw.strip().lower() == "local"):
            value = _DEFAULTS[name]
        else:
            value = _check_setting(name, raw)
        if name == "TimeZone":
            self._apply_timezone(value)
        self._set[name] = value
        return self._changed("SET", {name: value})

    def value(self, name: str) -> str:
        """``current_setting(name)``: 42704 for a setting pgbarrier does not keep."""
        canonical = _CANONICAL.get(name.lower())
        if canonical is None:
            raise PgError(f'unrecognized configuration parameter "{name}"', sqlstate="42704")
        return self.get(canonical)

    def set_value(self, name: str, value: str) -> str:
        """``set_config(name, value, is_local)``: the value stored (``is_local`` is ignored,
        as for ``SET LOCAL``)."""
        canonical = _CANONICAL.get(name.lower())
        if canonical is None:
            raise PgError(f'unrecognized configuration parameter "{name}"', sqlstate="42704")
        quoted = "'" + value.replace("'", "''") + "'"
        self.handle(SettingStatement("SET", canonical, quoted))
        return self.get(canonical)

    def rows(self) -> list[tuple[str, str, str]]:
        """``(name, setting, short_desc)`` of every setting, for ``pg_settings``."""
        out = [(n, self.get(n), "kept per session by pgbarrier") for n in _DEFAULTS]
        out += [(n, v, "fixed by pgbarrier") for n, v in _READ_ONLY.items()]
        return sorted(out)

    @staticmethod
    def _changed(tag: str, values: dict[str, str]) -> Result:
        result = command(tag)
        result.parameter_status = {n: v for n, v in values.items() if n in _REPORTED}
        return result
