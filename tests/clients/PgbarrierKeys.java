// pgjdbc's key and index metadata against pgbarrier: what DBeaver's and Metabase's foreign-key
// and index sync call.
//
//   javac -cp /usr/share/java/postgresql.jar -d OUT PgbarrierKeys.java
//   java -cp OUT:/usr/share/java/postgresql.jar PgbarrierKeys URL PARENT CHILD
//
// PARENT and CHILD are tables in schema public, CHILD with a foreign key to PARENT. One line
// per row, "key: value", fields separated by "|", a Java null printed as "null":
//
//   imported: PKTABLE_NAME|PKCOLUMN_NAME|FKTABLE_NAME|FKCOLUMN_NAME|KEY_SEQ|FK_NAME|PK_NAME
//                                  getImportedKeys(null, "public", CHILD)
//   exported: (same fields)        getExportedKeys(null, "public", PARENT)
//   cross: (same fields)           getCrossReference(null, "public", PARENT, null, "public", CHILD)
//   index: TABLE_NAME|NON_UNIQUE|INDEX_NAME|ORDINAL_POSITION|COLUMN_NAME
//                                  getIndexInfo(null, "public", T, false, false) for both
//   sequence: TABLE_NAME           getTables(null, "public", "%", {"SEQUENCE"})
//   done: keys
//
// A call that throws prints "FAILED: <call>|<SQLState>|<message>", the next call still runs, and
// the program exits 1 without "done". Used by tests/functional/test_catalog_reflection.py.

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;

public final class PgbarrierKeys {
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

    private static void keys(String key, ResultSet rs) throws SQLException {
        try (rs) {
            while (rs.next()) {
                out(key, rs.getString("PKTABLE_NAME"), rs.getString("PKCOLUMN_NAME"),
                    rs.getString("FKTABLE_NAME"), rs.getString("FKCOLUMN_NAME"),
                    rs.getShort("KEY_SEQ"), rs.getString("FK_NAME"), rs.getString("PK_NAME"));
            }
        }
    }

    public static void main(String[] args) throws SQLException {
        String parent = args[1];
        String child = args[2];
        try (Connection conn = DriverManager.getConnection(args[0])) {
            DatabaseMetaData md = conn.getMetaData();
            call("getImportedKeys", () -> keys("imported", md.getImportedKeys(null, "public", child)));
            call("getExportedKeys", () -> keys("exported", md.getExportedKeys(null, "public", parent)));
            call("getCrossReference", () -> keys("cross",
                md.getCrossReference(null, "public", parent, null, "public", child)));
            for (String table : new String[] {parent, child}) {
                call("getIndexInfo", () -> {
                    try (ResultSet rs = md.getIndexInfo(null, "public", table, false, false)) {
                        while (rs.next()) {
                            out("index", rs.getString("TABLE_NAME"), rs.getBoolean("NON_UNIQUE"),
                                rs.getString("INDEX_NAME"), rs.getShort("ORDINAL_POSITION"),
                                rs.getString("COLUMN_NAME"));
                        }
                    }
                });
            }
            call("getTables", () -> {
                try (ResultSet rs = md.getTables(null, "public", "%", new String[] {"SEQUENCE"})) {
                    while (rs.next()) {
                        out("sequence", rs.getString("TABLE_NAME"));
                    }
                }
            });
        } catch (SQLException e) {
            out("FAILED", "connect", e.getSQLState(), e.getMessage().replace('\n', ' '));
            System.exit(1);
        }
        if (failures > 0) {
            System.exit(1);
        }
        out("done", "keys");
    }
}
