/**
 * The parts of {@code cerberus-spring-boot-starter} that Spring Boot 3 needs in other packages than
 * Boot 4 (health contributors). Auto-configuration only: not API, may change without notice.
 */
package io.cerberus.spring.boot3;
