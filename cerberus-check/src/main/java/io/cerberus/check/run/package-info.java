/** The client JVMs of a check: how they start ({@code Workers}), what they run, and their handles in the checker. */
package io.cerberus.check.run;
