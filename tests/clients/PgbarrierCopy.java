// pgjdbc's CopyManager against pgbarrier: COPY FROM STDIN and TO STDOUT as JDBC tools run them.
//
//   javac -cp /usr/share/java/postgresql.jar -d OUT PgbarrierCopy.java
//   java -cp OUT:/usr/share/java/postgresql.jar PgbarrierCopy URL TABLE
//
// Creates TABLE (a int, b text), loads three rows with copyIn (CSV, from a Reader), copies them
// out with copyOut (text), then tries a copyIn with a bad value. Prints one line per step:
//
//   in: <rows>          out: <the COPY TO text, newlines as "|">
//   bad: <SQLState>     count: <rows in TABLE after the bad copy>
//
// Used by tests/functional/test_copy.py.

import java.io.StringReader;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

public final class PgbarrierCopy {
    public static void main(String[] args) throws Exception {
        String table = args[1];
        try (Connection conn = DriverManager.getConnection(args[0])) {
            try (Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE " + table + " (a int, b text)");
            }
            CopyManager copy = conn.unwrap(PGConnection.class).getCopyAPI();
            long in = copy.copyIn("COPY " + table + " FROM STDIN (FORMAT csv)",
                                  new StringReader("1,one\n2,\"t,wo\"\n3,\n"));
            System.out.println("in: " + in);
            StringWriter out = new StringWriter();
            copy.copyOut("COPY " + table + " TO STDOUT", out);
            System.out.println("out: " + out.toString().replace("\n", "|"));
            try {
                copy.copyIn("COPY " + table + " FROM STDIN", new StringReader("4\tfour\nx\ty\n"));
                System.out.println("bad: none");
            } catch (SQLException e) {
                System.out.println("bad: " + e.getSQLState());
            }
            try (Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
                rs.next();
                System.out.println("count: " + rs.getLong(1));
            }
        }
    }
}
