// pgjdbc with a multi-host URL against several pgbarrier processes: it must skip a follower
// (FATAL 57P03) and reach the leader.
//
//   javac -cp /usr/share/java/postgresql.jar -d OUT PgbarrierLeader.java
//   java -cp OUT:/usr/share/java/postgresql.jar PgbarrierLeader URL
//
// URL is a jdbc:postgresql://host1:port1,host2:port2/db URL. Prints "leader: ROLE|TERM|PORT",
// where PORT is the server port the connection reached (inet_server_port() is not answered by
// pgbarrier's catalog, so it is read from rw_leader's holder, "... on HOST:PORT"). A failed
// connect prints "FAILED: connect|<SQLState>|<message>" and exits 1. Used by
// tests/functional/test_leader_election.py.

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public class PgbarrierLeader {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.setProperty("user", "root");
        props.setProperty("connectTimeout", "10");
        try (Connection conn = DriverManager.getConnection(args[0], props);
             Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT role, term, holder FROM rw_catalog.rw_leader")) {
            rs.next();
            String holder = rs.getString(3);
            System.out.println("leader: " + rs.getString(1) + "|" + rs.getLong(2) + "|"
                               + holder.substring(holder.lastIndexOf(':') + 1));
        } catch (SQLException e) {
            System.out.println("FAILED: connect|" + e.getSQLState() + "|" + e.getMessage());
            System.exit(1);
        }
    }
}
