// pgjdbc against pgbarrier: one scenario per run, results printed one per line.
//
//   javac -cp /usr/share/java/postgresql.jar -d OUT PgbarrierJdbc.java
//   java -cp OUT:/usr/share/java/postgresql.jar PgbarrierJdbc URL SCENARIO DATABASE SUFFIX
//
// URL is a jdbc:postgresql:// URL, DATABASE the database it names (for ALTER DATABASE),
// SUFFIX makes this run's table names unique. Every line is "key: value"; a scenario that
// throws prints "FAILED: <SQLState> <message>" and exits 1, so the test shows the client's error.
// Used by tests/functional/test_clients_external.py.

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

public final class PgbarrierJdbc {
    private final Connection conn;
    private final String database;
    private final String table;

    private PgbarrierJdbc(Connection conn, String database, String suffix) {
        this.conn = conn;
        this.database = database;
        this.table = "jdbc_" + suffix;
    }

    private static void out(String key, Object value) {
        System.out.println(key + ": " + value);
    }

    private void seed(int rows) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("CREATE TABLE " + table + " (id INT, name TEXT)");
            StringBuilder sql = new StringBuilder("INSERT INTO " + table + " VALUES ");
            for (int i = 1; i <= rows; i++) {
                sql.append(i == 1 ? "" : ", ").append("(").append(i).append(", 'n").append(i).append("')");
            }
            st.executeUpdate(sql.toString());
        }
    }

    // Connecting with pgjdbc's defaults (what BI tools do), then one query.
    private void connect() throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        out("product", md.getDatabaseProductName());
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
            rs.next();
            out("select", rs.getInt(1));
        }
    }

    // Statement.executeUpdate counts and executeQuery rows (unnamed statements, extended protocol).
    private void statement() throws SQLException {
        try (Statement st = conn.createStatement()) {
            out("create", st.executeUpdate("CREATE TABLE " + table + " (id INT, name TEXT)"));
            out("insert", st.executeUpdate(
                    "INSERT INTO " + table + " VALUES (1, 'a'), (2, 'b'), (3, 'c')"));
            out("update", st.executeUpdate("UPDATE " + table + " SET name = 'z' WHERE id >= 2"));
            out("delete", st.executeUpdate("DELETE FROM " + table + " WHERE id = 3"));
            try (ResultSet rs = st.executeQuery("SELECT id, name FROM " + table + " ORDER BY id")) {
                while (rs.next()) {
                    out("row", rs.getInt(1) + " " + rs.getString(2));
                }
            }
            boolean hasRows = st.execute("SELECT count(*) FROM " + table);
            try (ResultSet rs = st.getResultSet()) {
                rs.next();
                out("execute", hasRows + " " + rs.getLong(1));
            }
        }
    }

    // One PreparedStatement executed six times: from the fifth execution on (prepareThreshold=5)
    // pgjdbc parses it once as a named server-side statement and asks for binary results.
    private void prepared() throws SQLException {
        seed(3);
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT id, name FROM " + table + " WHERE id = ?")) {
            for (int i = 1; i <= 6; i++) {
                ps.setInt(1, (i - 1) % 3 + 1);
                try (ResultSet rs = ps.executeQuery()) {
                    List<String> rows = new ArrayList<>();
                    while (rs.next()) {
                        rows.add(rs.getInt(1) + " " + rs.getString(2));
                    }
                    out("exec " + i, String.join(", ", rows));
                }
            }
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "UPDATE " + table + " SET name = ? WHERE id <= ?")) {
            int total = 0;
            for (int i = 1; i <= 6; i++) {
                ps.setString(1, "u" + i);
                ps.setInt(2, 2);
                total += ps.executeUpdate();
            }
            out("updated", total);
        }
    }

    // Common column types read through a PreparedStatement run six times: the last runs ask
    // for binary results (pgjdbc's default binary transfer set) on a named statement.
    private void types() throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("CREATE TABLE " + table + " (i INT, b BIGINT, s SMALLINT, f DOUBLE PRECISION, "
                    + "n NUMERIC(10, 2), ok BOOLEAN, d DATE, ts TIMESTAMP, t TEXT)");
            st.executeUpdate("INSERT INTO " + table + " VALUES (1, 9000000000, 7, 2.5, 12.34, true, "
                    + "DATE '2024-02-29', TIMESTAMP '2024-02-29 13:14:15.5', 'x'), "
                    + "(2, -1, -7, -0.25, -0.01, false, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59', NULL)");
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT i, b, s, f, n, ok, d, ts, t FROM " + table + " WHERE i = ?")) {
            for (int run = 1; run <= 6; run++) {
                ps.setInt(1, (run - 1) % 2 + 1);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    out("exec " + run, rs.getInt(1) + " " + rs.getLong(2) + " " + rs.getShort(3) + " "
                            + rs.getDouble(4) + " " + rs.getBigDecimal(5) + " " + rs.getBoolean(6) + " "
                            + rs.getDate(7) + " " + rs.getTimestamp(8) + " " + rs.getString(9));
                }
            }
        }
    }

    // executeBatch with autocommit on: pgjdbc sends every Parse/Bind/Execute of the batch before
    // one Sync, so PostgreSQL runs them as one implicit transaction — a failing statement in the
    // middle rolls the whole batch back.
    private void batch() throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("CREATE TABLE " + table + " (id INT PRIMARY KEY, name TEXT)");
        }
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + table + " VALUES (?, ?)")) {
            for (int i = 1; i <= 3; i++) {
                ps.setInt(1, i);
                ps.setString(2, "n" + i);
                ps.addBatch();
            }
            out("batch", java.util.Arrays.toString(ps.executeBatch()));
            for (int id : new int[] {4, 1, 5}) {  // 1 is a duplicate key
                ps.setInt(1, id);
                ps.setString(2, "m" + id);
                ps.addBatch();
            }
            try {
                ps.executeBatch();
                out("failing batch", "no error");
            } catch (SQLException e) {
                out("failing batch", e.getSQLState());
            }
        }
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT id FROM " + table + " ORDER BY id")) {
            List<String> ids = new ArrayList<>();
            while (rs.next()) {
                ids.add(Integer.toString(rs.getInt(1)));
            }
            out("ids", String.join(",", ids));
        }
    }

    // setFetchSize(2) inside a transaction: a named portal, Execute with a row limit of 2,
    // PortalSuspended, and further Executes on the same portal.
    private void fetchsize() throws SQLException {
        seed(5);
        conn.setAutoCommit(false);
        try (Statement st = conn.createStatement()) {
            st.setFetchSize(2);
            try (ResultSet rs = st.executeQuery("SELECT id, name FROM " + table + " ORDER BY id")) {
                int n = 0;
                while (rs.next()) {
                    n++;
                    out("row", rs.getInt(1) + " " + rs.getString(2));
                }
                out("rows", n);
            }
        }
        conn.commit();
        conn.setAutoCommit(true);
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            out("after commit", rs.getLong(1));
        }
    }

    // setTransactionIsolation / setReadOnly (what BI tools call), a write refused in the
    // read-only transaction, and the TimeZone pgjdbc sends at start-up.
    private void txmodes() throws SQLException {
        seed(1);
        conn.setAutoCommit(false);
        conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        conn.setReadOnly(true);
        try (Statement st = conn.createStatement()) {
            try (ResultSet rs = st.executeQuery("SHOW transaction_isolation")) {
                rs.next();
                out("isolation", rs.getString(1));
            }
            try (ResultSet rs = st.executeQuery("SHOW transaction_read_only")) {
                rs.next();
                out("read only", rs.getString(1));
            }
            out("insert", sqlState(st, "INSERT INTO " + table + " VALUES (2, 'x')"));
        }
        conn.rollback();
        conn.setReadOnly(false);
        conn.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SHOW transaction_isolation")) {
            rs.next();
            out("isolation", rs.getString(1));
        }
        out("getTransactionIsolation", conn.getTransactionIsolation() == Connection.TRANSACTION_SERIALIZABLE);
        conn.commit();
        conn.setAutoCommit(true);
    }

    private static String sqlState(Statement st, String sql) {
        try {
            st.execute(sql);
            return "none";
        } catch (SQLException e) {
            return e.getSQLState();
        }
    }

    // SQLException.getSQLState(): 55000 for a batch-refresh create while paused, 42P01.
    private void errors() throws SQLException {
        seed(2);
        String view = table + "_v";
        String create = "CREATE MATERIALIZED VIEW " + view + " WITH (refresh.interval.sec = 3600) AS "
                + "SELECT count(*) AS n FROM " + table;
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("ALTER DATABASE " + database + " PAUSE");
            out("paused create", sqlState(st, create));
            st.executeUpdate("ALTER DATABASE " + database + " RESUME");
            out("missing table", sqlState(st, "SELECT * FROM " + table + "_missing"));
            out("resumed create", sqlState(st, create));
            try (ResultSet rs = st.executeQuery("SELECT n FROM " + view)) {
                rs.next();
                out("view", rs.getLong(1));
            }
        }
    }

    private boolean paused(PreparedStatement query) throws SQLException {
        query.setString(1, database);
        try (ResultSet rs = query.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    // ALTER DATABASE ... PAUSE / RESUME as PreparedStatements (Parse/Bind/Execute, once each).
    private void control() throws SQLException {
        try (PreparedStatement pause = conn.prepareStatement("ALTER DATABASE " + database + " PAUSE");
             PreparedStatement resume = conn.prepareStatement("ALTER DATABASE " + database + " RESUME");
             PreparedStatement query = conn.prepareStatement(
                     "SELECT paused FROM rw_catalog.rw_databases WHERE name = ?")) {
            out("pause", pause.executeUpdate());
            out("paused", paused(query));
            resume.execute();
            out("resume", resume.getUpdateCount());
            out("paused", paused(query));
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: PgbarrierJdbc URL SCENARIO DATABASE SUFFIX");
            System.exit(2);
        }
        try (Connection conn = DriverManager.getConnection(args[0])) {
            PgbarrierJdbc t = new PgbarrierJdbc(conn, args[2], args[3]);
            switch (args[1]) {
                case "connect": t.connect(); break;
                case "statement": t.statement(); break;
                case "types": t.types(); break;
                case "prepared": t.prepared(); break;
                case "fetchsize": t.fetchsize(); break;
                case "txmodes": t.txmodes(); break;
                case "batch": t.batch(); break;
                case "errors": t.errors(); break;
                case "control": t.control(); break;
                default:
                    System.err.println("unknown scenario " + args[1]);
                    System.exit(2);
            }
            out("done", args[1]);
        } catch (SQLException e) {
            System.out.println("FAILED: " + e.getSQLState() + " " + e.getMessage());
            e.printStackTrace();
            System.exit(1);
        } catch (RuntimeException e) {
            System.out.println("FAILED: " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }
}
