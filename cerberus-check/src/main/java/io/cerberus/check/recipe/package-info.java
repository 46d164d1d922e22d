/** The negative controls: hand-rolled locks from the classic articles, and a hand-rolled guard without owner checks. */
package io.cerberus.check.recipe;
