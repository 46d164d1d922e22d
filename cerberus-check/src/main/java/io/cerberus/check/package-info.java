/**
 * The safety checker behind {@code cerberus check}: {@link io.cerberus.check.Check#run} takes the
 * options ({@link io.cerberus.check.CheckOptions}) and returns the verdict's exit code. The rest of
 * this module is not API: it may change in any release.
 */
package io.cerberus.check;
