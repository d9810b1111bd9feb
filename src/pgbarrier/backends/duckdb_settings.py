"""PostgreSQL client settings that DuckDB does not have, kept per session.

Clients send ``SET application_name``, ``extra_float_digits``, ``DateStyle``... at
connect and expect ``SHOW`` to answer. DuckDB rejects them, so pgbarrier keeps
them here. Rules this module keeps:

* Only values pgbarrier really honours are accepted: hex bytea, standard strings on;
  anything else is 22023 with a DETAIL saying why. ``client_encoding`` takes PostgreSQL's
  names (a bare word folded to lower case, ``UNICODE`` kept as written, as PostgreSQL keeps
  it) and is shown by its canonical name; the wire converts to and from it
  (:attr:`ClientSettings.encoding`, changed in place by SET, RESET, ``set_config``). A name
  PostgreSQL does not know is 22023; an encoding pgbarrier cannot convert
  (:mod:`pgbarrier.pgproto.encodings`) is PostgreSQL's 0A000 ``invalid value for parameter
  "client_encoding": "SJIS"`` with DETAIL ``Conversion between SJIS and UTF8 is not
  supported.``. ``DateStyle`` (every style and
  order, PostgreSQL's rules: :func:`pgbarrier.pgproto.datestyle.parse_datestyle`) and
  ``IntervalStyle`` (all four) are PostgreSQL's, and text results print in them
  (:meth:`ClientSettings.styles`); DuckDB itself reads date literals in its own ISO-first
  way whatever the order says. ``TimeZone`` takes any zone DuckDB's ICU
  knows and is applied to the session's DuckDB connection (``timestamptz`` values
  print in it, as in PostgreSQL); a zone DuckDB rejects is 22023. ``search_path`` is
  kept as PostgreSQL shows it (names folded, quoted where needed) and handed to the
  backend's ``set_search_path`` hook, which applies it to DuckDB.
* ``server_version`` and friends answer ``SHOW``; ``SET`` on them is 55P02.
* Start-up settings (a start-up parameter or ``options``' ``-c name=value``) are taken by
  :meth:`ClientSettings.apply_startup` exactly as ``SET`` takes them, so a value
  pgbarrier cannot honour is the session's FATAL 22023 instead of being dropped (a
  ``client_encoding`` pgbarrier cannot convert: PostgreSQL's FATAL 0A000 ``conversion
  between SJIS and UTF8 is not supported``). Names DuckDB sessions do not keep are ignored,
  and ``options`` switches other than ``-c`` / ``--`` are 0A000. The start-up values are
  what ``RESET``, ``RESET ALL`` (``DISCARD ALL``) and ``SET ... TO DEFAULT`` go back to, as
  in PostgreSQL (pgbarrier's own settings excepted: :mod:`pgbarrier.session.settings`).
* Transaction modes: ``BEGIN``/``START TRANSACTION`` modes (:meth:`ClientSettings.begin`),
  ``SET TRANSACTION ...``, ``SET SESSION CHARACTERISTICS AS TRANSACTION ...`` and the
  settings ``transaction_isolation`` / ``transaction_read_only`` /
  ``transaction_deferrable`` and their ``default_`` ones take PostgreSQL's values and
  report what was set, as PostgreSQL: a block's modes are its own (outside a block the
  ``default_`` ones apply; ``SET TRANSACTION`` there is a WARNING 25P01 that changes
  nothing), and changing them after the block's first statement is 25001.
  What DuckDB gives (one choice for all levels): every DuckDB transaction runs under
  snapshot isolation, which is PostgreSQL's REPEATABLE READ; it gives at least what READ
  UNCOMMITTED and READ COMMITTED promise (a statement sees the block's snapshot, not
  commits made since), while SERIALIZABLE is accepted and reported but runs as snapshot
  isolation too: write skew between concurrent transactions is not prevented (a
  write-write conflict still fails one of them). DEFERRABLE changes nothing.
  A read-only transaction is enforced by the backend session
  (:mod:`pgbarrier.backends.duckdb_readonly`). ``client_min_messages`` and ``lock_timeout``
  are remembered (DuckDB never waits for a lock: a conflict fails at once).
* A change to a reported setting comes back in ``Result.parameter_status`` so
  the session sends ParameterStatus.
* A session keeps only the values it set (the defaults are shared): thousands of idle
  sessions each held a copy of every default.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from pgbarrier.backends.duckdb_gucs import GUCS, base_value, check
from pgbarrier.errors import (FeatureNotSupported, InvalidParameterValue, Notice, PgError,
                              SyntaxError)
from pgbarrier.pgproto import encodings
from pgbarrier.result import Column, Result, command, rowset
from pgbarrier.sql.setting import (
    OWN_SETTINGS,
    SET_CHARACTERISTICS,
    SET_TRANSACTION,
    ModeSyntaxError,
    SettingStatement,
    transaction_modes,
    unquote,
)
from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.datestyle import (DEFAULT_DATESTYLE, INTERVAL_STYLES, DateStyleError,
                                         parse_datestyle)

if TYPE_CHECKING:
    from pgbarrier.sql.startup_params import StartupSettings

_UTC_NAMES = {n.lower(): n for n in ("UTC", "Etc/UTC", "GMT", "Etc/GMT", "UCT", "Etc/UCT",
                                       "Zulu", "Etc/Zulu", "Universal", "Etc/Universal",
                                       "Greenwich", "Etc/Greenwich", "GMT0", "Etc/GMT0",
                                       "GMT+0", "GMT-0", "Etc/GMT+0", "Etc/GMT-0", "Z")}
_TRUE = ("on", "true", "yes", "1", "t", "y")
#: canonical names of the client settings kept here, and their defaults
_DEFAULTS = {
    "application_name": "", "extra_float_digits": "1", "client_encoding": "UTF8",
    "DateStyle": "ISO, MDY", "IntervalStyle": "postgres", "TimeZone": "UTC",
    "standard_conforming_strings": "on", "bytea_output": "hex", "search_path": '"$user", public',
    "client_min_messages": "notice", "transaction_isolation": "read committed",
    "default_transaction_isolation": "read committed", "transaction_read_only": "off",
    "default_transaction_read_only": "off", "transaction_deferrable": "off",
    "default_transaction_deferrable": "off", "lock_timeout": "0",
    # pgbarrier's own (session/settings.py): SET/SHOW never come here, ``remember`` does
    "statement_timeout": "0", "idle_in_transaction_session_timeout": "0",
    "idle_session_timeout": "0",
}
#: the settings of the transaction in progress (their ``default_`` ones outside a block)
_TX_NAMES = ("transaction_isolation", "transaction_read_only", "transaction_deferrable")
_FALSE = ("off", "false", "no", "0", "f", "n")
DEFAULT_SEARCH_PATH = _DEFAULTS["search_path"]
_READ_ONLY = {"server_version": "15.0", "server_version_num": "150000",
              "server_encoding": "UTF8", "integer_datetimes": "on",
              "max_identifier_length": "63", "lc_collate": "C.UTF-8", "lc_ctype": "C.UTF-8",
              "is_superuser": "on", "block_size": "8192",
              "max_index_keys": "32", "max_function_args": "100"}
_ISOLATION = ("read uncommitted", "read committed", "repeatable read", "serializable")
_MESSAGE_LEVELS = ("debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice",
                   "warning", "error")
_REPORTED = frozenset({"application_name", "client_encoding", "DateStyle", "IntervalStyle",
                       "TimeZone", "standard_conforming_strings",
                       "default_transaction_read_only"})
#: the reported ones in the order they are announced
_REPORTED_ORDER = tuple(n for n in _DEFAULTS if n in _REPORTED)
_CANONICAL = {n.lower(): n for n in (*_DEFAULTS, *_READ_ONLY)}
#: PostgreSQL's other user-settable settings, kept with duckdb_gucs' rules (not ``role``:
#: PostgreSQL checks it against its roles; nor pgbarrier's own, session/settings.py)
_GENERIC = {g.name: g for low, g in GUCS.items()
            if low not in _CANONICAL and low not in OWN_SETTINGS and low != "role"}
_GENERIC_DEFAULTS = {n: check(g, g.default, g.default) for n, g in _GENERIC.items()}
_CANONICAL.update({n.lower(): n for n in _GENERIC})


def _bad_value(name: str, value: str, detail: str | None = None) -> PgError:
    return InvalidParameterValue(f'invalid value for parameter "{name}": "{value}"', detail=detail)


_PLAIN_IDENT = re.compile(r"[a-z_][a-z0-9_$]*\Z")


def _list_items(raw: str) -> list[str]:
    """The names of ``SET name = a, 'b', "C"``: unquoted words folded to lower case,
    literals and quoted identifiers as written (PostgreSQL's list setting)."""
    out = []
    for m in re.finditer(r"\s*('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|[^,]+?)\s*(?:,|$)", raw.strip()):
        item = m.group(1)
        if item.startswith("'"):
            out.append(item[1:-1].replace("''", "'"))
        elif item.startswith('"'):
            out.append(item[1:-1].replace('""', '"'))
        elif item:
            out.append(item.lower())
    return out


def path_names(shown: str) -> list[str]:
    """The schema names of a ``search_path`` value as SHOW gives it (``"$user"`` kept)."""
    if shown == '""':
        return []
    return [n.lower() if not n.startswith('"') else n[1:-1].replace('""', '"')
            for n in (x.strip() for x in re.findall(r'"(?:[^"]|"")*"|[^,]+', shown))]


def _show_ident(name: str) -> str:
    return name if _PLAIN_IDENT.match(name) else '"' + name.replace('"', '""') + '"'


def _check_setting(name: str, raw: str, current: str | None = None) -> str:
    """The value PostgreSQL would store for ``SET name = raw`` (22023 if pgbarrier cannot);
    ``current``: the setting's value now (DateStyle keeps the half not given)."""
    if name == "search_path":
        return ", ".join(_show_ident(n) for n in _list_items(raw)) or '""'
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
        return _client_encoding(raw)
    if name == "TimeZone":
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]  # SET TIME ZONE "Asia/Shanghai" (pgcli)
        return _UTC_NAMES.get(value.lower(), value)  # DuckDB judges the rest
    if name == "DateStyle":
        try:
            text = ", ".join(_list_items(raw)) if raw.count("'") > 2 else value  # 'a', 'b'
            return parse_datestyle(text, current or DEFAULT_DATESTYLE)
        except DateStyleError as exc:
            raise InvalidParameterValue(str(exc), detail=exc.detail) from None
    if name == "IntervalStyle":
        if low in INTERVAL_STYLES:
            return low
        raise _bad_value(name, value)
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
    if name in ("transaction_read_only", "default_transaction_read_only",
                "transaction_deferrable", "default_transaction_deferrable"):
        if low in _FALSE or low in ("of", "fa", "fal", "fals"):
            return "off"
        if low in _TRUE or low in ("tr", "tru", "ye"):
            return "on"
        raise InvalidParameterValue(f'parameter "{name}" requires a Boolean value')
    if name == "client_min_messages":
        if low in _MESSAGE_LEVELS:
            return low
        raise _bad_value(name, value)
    if name == "lock_timeout":
        return value
    guc = _GENERIC.get(name)
    return check(guc, raw, value) if guc is not None else value  # else a custom a.b


class _Unconvertible(PgError):
    """A client encoding PostgreSQL knows that cannot be converted to and from UTF8."""

    sqlstate = "0A000"

    def __init__(self, message: str, canonical: str, **fields: str | None) -> None:
        super().__init__(message, **fields)  # type: ignore[arg-type]
        self.canonical = canonical


def _client_encoding(raw: str) -> str:
    """``SET client_encoding`` (module rules): PostgreSQL's canonical name of the one
    encoding given (a bare word folded to lower case, as PostgreSQL folds it), except
    ``UNICODE`` written so, which PostgreSQL keeps as it is."""
    text = raw.strip()
    items = [unquote(text)] if text[:2] in ("E'", "e'") else _list_items(raw) if text else [""]
    if len(items) != 1:
        raise SyntaxError("SET client_encoding takes only one argument")
    value = items[0]
    canonical = encodings.encoding_name(value)
    if canonical is None:
        raise _bad_value("client_encoding", value)
    if encodings.unsupported(canonical):
        hint = None if canonical == "MULE_INTERNAL" else (  # PostgreSQL's own refusal
            f"pgbarrier on DuckDB converts these client encodings: {encodings.CONVERTED_LIST}.")
        raise _Unconvertible(f'invalid value for parameter "client_encoding": "{value}"',
                             canonical, detail=f"Conversion between {canonical} and UTF8 "
                             "is not supported.", hint=hint)
    return value if value == "UNICODE" else canonical


def _in_own_unit(name: str, shown: str) -> str:
    """``pg_settings.setting`` of a setting kept here (``5s`` of lock_timeout is ``5000``)."""
    guc = GUCS.get(name.lower())
    if guc is None:
        return shown
    try:
        return base_value(guc, shown)
    except PgError:
        return shown


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _default(name: str) -> str:
    value = _DEFAULTS.get(name)
    if value is None:
        value = _READ_ONLY.get(name)
    return value if value is not None else _GENERIC_DEFAULTS.get(name, "")


class ClientSettings:
    """One session's PostgreSQL client settings."""

    def __init__(self, on_reset_all: Callable[[], None] = lambda: None,
                 set_timezone: Callable[[str], None] | None = None,
                 set_search_path: Callable[[str], None] | None = None) -> None:
        #: the values this session set (one that went back to its default may stay)
        self._set: dict[str, str] = {}
        #: the start-up values: what RESET, RESET ALL and SET ... DEFAULT go back to
        self._reset: dict[str, str] = {}
        #: the client encoding the wire converts to (changed in place: see its module)
        self.encoding = encodings.ClientEncoding()
        self._on_reset_all = on_reset_all
        self._set_timezone = set_timezone
        self._set_search_path = set_search_path
        #: the modes of the transaction block in progress (None outside one)
        self._tx: dict[str, str] | None = None
        #: a statement has run in the block (its snapshot is taken: modes are fixed)
        self.tx_queried = False

    @property
    def settings(self) -> dict[str, str]:
        """Every setting kept here and its value now (a copy)."""
        return {**_DEFAULTS, **self._set}

    # ------------------------------------------------------------------ transactions

    def begin(self, modes: dict[str, str]) -> None:
        """A transaction block starts with these modes (the rest are the defaults)."""
        self._tx = dict(modes)
        self.tx_queried = False

    def end(self) -> None:
        """The block ended (COMMIT or ROLLBACK): the defaults apply again."""
        self._tx = None
        self.tx_queried = False

    @property
    def in_block(self) -> bool:
        """A transaction block is in progress."""
        return self._tx is not None

    def transaction_modes(self) -> dict[str, str]:
        """The modes of the block in progress (``AND CHAIN`` starts the next with them)."""
        return {n: self.get(n) for n in _TX_NAMES}

    @property
    def read_only(self) -> bool:
        """The transaction running now (a block, or one statement's) is read-only."""
        return self.get("transaction_read_only") == "on"

    def _set_in_tx(self, modes: dict[str, str]) -> None:
        tx = self._tx
        assert tx is not None
        if self.tx_queried:
            for name, value in modes.items():
                if name == "transaction_isolation" and value != self.get(name):
                    raise PgError("SET TRANSACTION ISOLATION LEVEL must be called before any "
                                  "query", sqlstate="25001")
                if name == "transaction_read_only" and value == "off" and self.read_only:
                    raise PgError("transaction read-write mode must be set before any query",
                                  sqlstate="25001")
                if name == "transaction_deferrable":
                    raise PgError("SET TRANSACTION [NOT] DEFERRABLE must be called before any "
                                  "query", sqlstate="25001")
        tx.update(modes)

    def _transaction(self, stmt: SettingStatement) -> Result:
        """``SET TRANSACTION modes`` / ``SET SESSION CHARACTERISTICS AS TRANSACTION modes``."""
        text = stmt.value or ""
        try:
            modes = transaction_modes(text)
        except ModeSyntaxError as exc:
            raise SyntaxError(f'syntax error at or near "{exc.token}"') from None
        if not modes:
            raise SyntaxError('syntax error at or near ";"' if not text.strip() else
                              f'syntax error at or near "{text.split()[0]}"')
        if stmt.name == SET_CHARACTERISTICS:
            changed = {"default_" + n: v for n, v in modes.items()}
            self._set.update(changed)
            return self._changed("SET", changed)
        if self._tx is None:
            return command("SET", [Notice("SET TRANSACTION can only be used in transaction "
                                          "blocks", sqlstate="25P01", severity="WARNING")])
        self._set_in_tx(modes)
        return command("SET")

    def get(self, name: str) -> str:
        """The value now of canonical setting ``name`` (kept here or read-only)."""
        if name in _TX_NAMES:
            tx = self._tx
            value = tx.get(name) if tx is not None else None
            return value if value is not None else self.get("default_" + name)
        value = self._set.get(name)
        return value if value is not None else _default(name)

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
            canonical = _CANONICAL.get(name.lower())
            if canonical == "search_path":
                # a start-up value is the setting's text as given (PostgreSQL shows it so),
                # not SET's list
                self._set["search_path"] = value
                if self._set_search_path is not None:
                    self._set_search_path(value)
            elif canonical == "client_encoding":
                try:  # the value is a string, not SQL: quoted, it is taken as it is
                    self.handle(SettingStatement("SET", name, _literal(value)))
                except _Unconvertible as exc:  # PostgreSQL's words at start-up
                    raise FeatureNotSupported(f"conversion between {exc.canonical} and UTF8 "
                                              "is not supported", hint=exc.hint) from None
            elif canonical is not None:
                self.handle(SettingStatement("SET", name, value))
            if canonical is not None and canonical in self._set \
                    and canonical.lower() not in OWN_SETTINGS:
                self._reset[canonical] = self._set[canonical]

    def styles(self) -> tuple[str, str] | None:
        """(DateStyle, IntervalStyle) when either is not the default, for text output."""
        datestyle, intervalstyle = self.get("DateStyle"), self.get("IntervalStyle")
        if datestyle.startswith("ISO") and intervalstyle == "postgres":
            return None
        return datestyle, intervalstyle

    def reported(self) -> dict[str, str]:
        """The reported (ParameterStatus) settings kept here, as they are now."""
        return {n: self.get(n) for n in _REPORTED_ORDER}

    def remember(self, name: str, shown: str) -> None:
        """pgbarrier's own setting ``name`` (lower case) is now ``shown``, for
        ``current_setting`` and ``pg_settings``."""
        canonical = _CANONICAL.get(name)
        if canonical is not None:
            self._set[canonical] = shown

    def shown(self, stmt: SettingStatement) -> str | None:
        """The canonical name ``SHOW`` answers for here, or None."""
        return self._name(stmt.name) if stmt.verb == "SHOW" else None

    def _name(self, name: str, setting: bool = False) -> str | None:
        """The canonical name of a setting kept here; a custom ``a.b`` one (PostgreSQL's
        placeholder) once SET, or when ``setting``."""
        low = name.lower()
        canonical = _CANONICAL.get(low)
        if canonical is None and "." in low and (setting or low in self._set):
            return low
        return canonical

    def handle(self, stmt: SettingStatement) -> Result | None:
        """A SET/SHOW/RESET of a client setting kept here, else None (DuckDB's own)."""
        if stmt.name in (SET_TRANSACTION, SET_CHARACTERISTICS) and stmt.verb == "SET":
            return self._transaction(stmt)
        if stmt.verb == "SHOW":
            if stmt.name.lower() == "all":
                return rowset([Column("name", pgt.TEXT), Column("setting", pgt.TEXT),
                               Column("description", pgt.TEXT)],
                              [(n, self.get(n), d) for n, _, d in self.rows()], "SHOW")
            name = self._name(stmt.name)
            if name is None:
                return None  # DuckDB's (its settings, SHOW TABLES; else the backend's 42704)
            value = self.get(name)
            return rowset([Column(name, pgt.TEXT)], [(value,)], "SHOW")
        if stmt.verb == "RESET":
            if stmt.name.lower() == "all":
                before = {n: self.get(n) for n in _REPORTED_ORDER}
                self._set.clear()
                self._on_reset_all()
                reset = self._reset
                if reset:  # back to the start-up values (PostgreSQL's reset values)
                    self._set.update(reset)
                    if "TimeZone" in reset:
                        self._apply_timezone(reset["TimeZone"])
                    if "search_path" in reset and self._set_search_path is not None:
                        self._set_search_path(reset["search_path"])
                self._encoding_now()
                return self._changed("RESET", {n: v for n in _REPORTED_ORDER
                                               if (v := self.get(n)) != before[n]})
            name = self._name(stmt.name, setting=True)
            if name is None:
                return None
            if name in _READ_ONLY:
                raise PgError(f'parameter "{name}" cannot be changed', sqlstate="55P02")
            if name in _TX_NAMES:
                return command("RESET")
            value = self._reset_value(name)
            if name == "TimeZone":
                self._apply_timezone(value)
            if name in self._reset:
                self._set[name] = value
            elif name in _CANONICAL.values():
                self._set.pop(name, None)
            else:
                self._set[name] = ""  # a custom setting RESET is empty, not gone
            if name == "search_path" and self._set_search_path is not None:
                self._set_search_path(value)
            if name == "client_encoding":
                self._encoding_now()
            return self._changed("RESET", {name: self.get(name)})
        name = self._name(stmt.name, setting=True)
        if name is None:
            return None
        raw = stmt.value or ""
        if name in _READ_ONLY:
            raise PgError(f'parameter "{name}" cannot be changed', sqlstate="55P02")
        if raw.strip().lower() == "default" or (name == "TimeZone" and raw.strip().lower() == "local"):
            value = self._reset_value(name)
        else:
            value = _check_setting(name, raw, self.get(name))
        if name == "TimeZone":
            self._apply_timezone(value)
        if name in _TX_NAMES:  # the block's (outside one it changes nothing, as PostgreSQL)
            if self._tx is not None:
                self._set_in_tx({name: value})
            return command("SET")
        self._set[name] = value
        if name == "search_path" and self._set_search_path is not None:
            self._set_search_path(value)
        elif name == "client_encoding":
            self._encoding_now()
        return self._changed("SET", {name: value})

    def _reset_value(self, name: str) -> str:
        """What RESET gives ``name``: its start-up value, else its default."""
        value = self._reset.get(name)
        return value if value is not None else _default(name)

    def _encoding_now(self) -> None:
        """The wire converts to the client_encoding now in force."""
        self.encoding.set(self.get("client_encoding"))

    def value(self, name: str) -> str:
        """``current_setting(name)``: 42704 for a setting pgbarrier does not keep."""
        canonical = self._name(name)
        if canonical is None:
            raise PgError(f'unrecognized configuration parameter "{name}"', sqlstate="42704")
        return self.get(canonical)

    def set_value(self, name: str, value: str) -> str:
        """``set_config(name, value, is_local)``: the value stored (``is_local`` is ignored,
        as for ``SET LOCAL``)."""
        canonical = self._name(name, setting=True)
        if canonical is None:
            raise PgError(f'unrecognized configuration parameter "{name}"', sqlstate="42704")
        quoted = "'" + value.replace("'", "''") + "'"
        self.handle(SettingStatement("SET", canonical, quoted))
        return self.get(canonical)

    def rows(self) -> list[tuple[str, str, str]]:
        """``(name, setting, short_desc)`` of every setting, for ``pg_settings``."""
        out = [(n, _in_own_unit(n, self.get(n)), "kept per session by pgbarrier")
               for n in _DEFAULTS]
        out += [(n, v, "fixed by pgbarrier") for n, v in _READ_ONLY.items()]
        out += [(n, base_value(g, self.get(n)), g.description + " (accepted; DuckDB has no use "
                 "for it)") for n, g in _GENERIC.items()]
        return sorted(out)

    @staticmethod
    def _changed(tag: str, values: dict[str, str]) -> Result:
        result = command(tag)
        result.parameter_status = {n: v for n, v in values.items() if n in _REPORTED}
        return result
