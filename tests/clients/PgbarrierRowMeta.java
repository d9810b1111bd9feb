// pgjdbc's ResultSetMetaData against pgbarrier: what it tells of each column of a query.
//
//   javac -cp /usr/share/java/postgresql.jar -d OUT PgbarrierRowMeta.java
//   java -cp OUT:/usr/share/java/postgresql.jar PgbarrierRowMeta URL QUERY...
//
// Each QUERY runs twice, as a Statement (simple protocol) and as a PreparedStatement
// (extended protocol, described before it runs); for each column one line
//
//   <s|p> <query number> <column>: label|tableName|schemaName|isNullable|precision|scale|
//                                  displaySize|typeName|columnType|baseColumnName
//
// (baseColumnName is pgjdbc's PGResultSetMetaData.getBaseColumnName; tableName and
// isNullable come from pgjdbc's catalog lookup of the RowDescription's table OID and attnum).
// A query that throws prints "FAILED: <n>|<SQLState>|<message>" and the program exits 1
// after the others ran. Used by tests/functional/test_rowdesc_metadata.py.

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;

import org.postgresql.PGResultSetMetaData;

public final class PgbarrierRowMeta {
    private static void print(String kind, int query, ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        PGResultSetMetaData pg = md.unwrap(PGResultSetMetaData.class);
        for (int i = 1; i <= md.getColumnCount(); i++) {
            System.out.println(kind + " " + query + " " + i + ": " + md.getColumnLabel(i)
                + "|" + md.getTableName(i) + "|" + md.getSchemaName(i)
                + "|" + md.isNullable(i) + "|" + md.getPrecision(i) + "|" + md.getScale(i)
                + "|" + md.getColumnDisplaySize(i) + "|" + md.getColumnTypeName(i)
                + "|" + md.getColumnType(i) + "|" + pg.getBaseColumnName(i));
        }
    }

    public static void main(String[] args) throws Exception {
        int failures = 0;
        try (Connection conn = DriverManager.getConnection(args[0])) {
            for (int q = 1; q < args.length; q++) {
                try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(args[q])) {
                    print("s", q, rs);
                } catch (SQLException e) {
                    failures++;
                    System.out.println("FAILED: s" + q + "|" + e.getSQLState() + "|" + e.getMessage());
                }
                try (PreparedStatement ps = conn.prepareStatement(args[q]); ResultSet rs = ps.executeQuery()) {
                    print("p", q, rs);
                } catch (SQLException e) {
                    failures++;
                    System.out.println("FAILED: p" + q + "|" + e.getSQLState() + "|" + e.getMessage());
                }
            }
        }
        System.exit(failures == 0 ? 0 : 1);
    }
}
