package io.cerberus.bench;

/** A SQL server of a run (PostgreSQL, MariaDB): what the JDBC group reads from it. */
interface SqlServer extends AutoCloseable {
    /** @return the JDBC URL of the bench's database, with its user and query already begun ({@code ?user=...}) */
    String jdbcUrl();

    /** Runs one statement, such as the DDL of a peer's table. */
    void execute(String sql);

    /** @return the server's name and version, for the report */
    String version();

    /** @return whether {@link #statements()} counts */
    boolean countsStatements();

    /** @return the statements the server has run, less the reads of this count */
    long statements();

    /** @return the rows of every table of the bench's database (the lock tables of Cerberus and the peers) */
    long rows();

    /** @return the bytes of the bench's database */
    long databaseSize();

    @Override
    void close();
}
