// pgjdbc's DatabaseMetaData against pgbarrier: what DBeaver and Metabase call to browse a database.
//
//   javac -cp /usr/share/java/postgresql.jar -d OUT PgbarrierMeta.java
//   java -cp OUT:/usr/share/java/postgresql.jar PgbarrierMeta URL TABLE
//
// URL is a jdbc:postgresql:// URL; TABLE the table (in schema public) whose columns and primary
// key are listed. One line per row, "key: value", fields of a row separated by "|", a Java null
// printed as "null":
//
//   catalog: TABLE_CAT                          getCatalogs()
//   schema: TABLE_SCHEM                         getSchemas()
//   table: TABLE_NAME|TABLE_TYPE                getTables(null, "public", "%",
//                                                         {TABLE, VIEW, MATERIALIZED VIEW})
//   column: COLUMN_NAME|TYPE_NAME|DATA_TYPE|COLUMN_SIZE|DECIMAL_DIGITS|IS_NULLABLE|COLUMN_DEF
//                                               getColumns(null, "public", TABLE, null)
//   pk: TABLE_NAME|COLUMN_NAME|KEY_SEQ|PK_NAME  getPrimaryKeys(null, "public", TABLE)
//   isolation: READ_COMMITTED (or another)      getTransactionIsolation()
//   done: meta
//
// A call that throws prints "FAILED: <call>|<SQLState>|<message>" and the next call still runs
// (autocommit is on, so one failed query does not abort the others); a failed connect prints
// "FAILED: connect|..." and nothing else. Either way the program exits 1 without "done", so the
// test shows the client's own errors. Used by tests/functional/test_bi_catalog.py, and run
// against PostgreSQL itself by tests/clients/capture_client_queries.py to record the queries
// these calls send.

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;

public final class PgbarrierMeta {
    private interface Call {
        void run() throws SQLException;
    }

    private static int failures = 0;

    private static void out(String key, Object... fields) {
        StringBuilder line = new StringBuilder(key).append(": ");
        for (int i = 0; i < fields.length; i++) {
            line.append(i == 0 ? "" : "|").append(fields[i]);
        }
        System.out.println(line);
    }

    private static void call(String name, Call body) {
        try {
            body.run();
        } catch (SQLException e) {
            failures++;
            out("FAILED", name, e.getSQLState(), e.getMessage().replace('\n', ' '));
        }
    }

    private static String isolationName(int level) {
        switch (level) {
            case Connection.TRANSACTION_NONE: return "NONE";
            case Connection.TRANSACTION_READ_UNCOMMITTED: return "READ_UNCOMMITTED";
            case Connection.TRANSACTION_READ_COMMITTED: return "READ_COMMITTED";
            case Connection.TRANSACTION_REPEATABLE_READ: return "REPEATABLE_READ";
            case Connection.TRANSACTION_SERIALIZABLE: return "SERIALIZABLE";
            default: return "UNKNOWN(" + level + ")";
        }
    }

    private static void browse(Connection conn, String table) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        call("getCatalogs", () -> {
            try (ResultSet rs = md.getCatalogs()) {
                while (rs.next()) {
                    out("catalog", rs.getString("TABLE_CAT"));
                }
            }
        });
        call("getSchemas", () -> {
            try (ResultSet rs = md.getSchemas()) {
                while (rs.next()) {
                    out("schema", rs.getString("TABLE_SCHEM"));
                }
            }
        });
        call("getTables", () -> {
            try (ResultSet rs = md.getTables(null, "public", "%",
                    new String[] {"TABLE", "VIEW", "MATERIALIZED VIEW"})) {
                while (rs.next()) {
                    out("table", rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE"));
                }
            }
        });
        call("getColumns", () -> {
            try (ResultSet rs = md.getColumns(null, "public", table, null)) {
                while (rs.next()) {
                    out("column", rs.getString("COLUMN_NAME"), rs.getString("TYPE_NAME"),
                            rs.getInt("DATA_TYPE"), rs.getInt("COLUMN_SIZE"), rs.getInt("DECIMAL_DIGITS"),
                            rs.getString("IS_NULLABLE"), rs.getString("COLUMN_DEF"));
                }
            }
        });
        call("getPrimaryKeys", () -> {
            try (ResultSet rs = md.getPrimaryKeys(null, "public", table)) {
                while (rs.next()) {
                    out("pk", rs.getString("TABLE_NAME"), rs.getString("COLUMN_NAME"),
                            rs.getInt("KEY_SEQ"), rs.getString("PK_NAME"));
                }
            }
        });
        call("getTransactionIsolation",
                () -> out("isolation", isolationName(conn.getTransactionIsolation())));
    }

    public static void main(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: PgbarrierMeta URL TABLE");
            System.exit(2);
        }
        try (Connection conn = DriverManager.getConnection(args[0])) {
            browse(conn, args[1]);
        } catch (SQLException e) {
            failures++;
            out("FAILED", "connect", e.getSQLState(), e.getMessage().replace('\n', ' '));
        }
        System.out.flush();
        if (failures > 0) {
            System.exit(1);
        }
        out("done", "meta");
    }
}
