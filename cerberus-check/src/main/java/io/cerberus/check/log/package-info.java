/** What a run leaves for the judges: the event logs, the fenced registers, the effect ledger. */
package io.cerberus.check.log;
