/**
 * The {@code jdbc:} lock engine over plain JDBC: PostgreSQL, MariaDB/MySQL and H2. Found through
 * {@link java.util.ServiceLoader}; {@link io.cerberus.jdbc.JdbcEngineProvider} is public only for
 * that, and {@link io.cerberus.jdbc.JdbcOptions} for settings that do not belong in a URI (an
 * application's own {@link javax.sql.DataSource}). Every other class here is internal, not API.
 * See {@code docs/JDBC.md}.
 */
package io.cerberus.jdbc;
