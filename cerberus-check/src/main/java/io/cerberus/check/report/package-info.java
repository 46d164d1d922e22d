/** What a check shows: the progress line's text and the HTML timeline (the text reports are the judgements'). */
package io.cerberus.check.report;
