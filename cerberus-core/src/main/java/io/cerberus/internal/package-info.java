/**
 * Not API: the machinery written once for every engine (reentrancy, lease renewal, waiting,
 * argument checks). May change in any release; do not use it from application code.
 */
package io.cerberus.internal;
