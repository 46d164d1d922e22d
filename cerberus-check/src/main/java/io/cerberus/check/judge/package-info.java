/** The judges: one {@link io.cerberus.check.judge.Judge} per property, reading a run's logs after it ends. */
package io.cerberus.check.judge;
