/** Console helpers the command, the checker and the bench share: durations, one-line logging, the progress line, stop on exit. */
package io.cerberus.check.console;
