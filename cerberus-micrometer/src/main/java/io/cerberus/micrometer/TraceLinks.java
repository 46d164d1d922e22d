package io.cerberus.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.tracing.Link;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.TracingObservationHandler;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Ties a lock's holder and its waiters together in traces, for {@link MicrometerMetrics}. A hold
 * names the trace it was taken in: its holder description ends with
 * {@code trace=<trace id>/<span id>} (the span of its wait), which {@code cerberus inspect} and the
 * actuator show. A waiter that finds the lock busy gets, under its {@code cerberus.lock.wait} span,
 * a child span {@code cerberus.lock.blocked} linked to the holder's trace, from the busy answer to
 * the end of the wait. Needs Micrometer Tracing on the class path; nothing else in this module does.
 */
public final class TraceLinks {
    private static final Pattern NOTE = Pattern.compile("trace=([0-9a-f]{16}|[0-9a-f]{32})/([0-9a-f]{16})");

    private final Tracer tracer;

    /**
     * @param tracer the application's tracer
     */
    public TraceLinks(Tracer tracer) {
        this.tracer = Objects.requireNonNull(tracer, "tracer");
    }

    /** @return {@code trace=<trace id>/<span id>} of the wait's span (else the current span), or empty */
    String note(Observation wait) {
        Span span = spanOf(wait);
        if (span == null) {
            span = tracer.currentSpan();
        }
        if (span == null) {
            return "";
        }
        TraceContext context = span.context();
        return "trace=" + context.traceId() + "/" + context.spanId();
    }

    /**
     * @return what ends the started span of a wait blocked by {@code holder}, linked to the
     *     holder's trace; null when the wait has no span or the holder named no trace
     */
    Runnable blocked(Observation wait, String holder) {
        Span waiting = spanOf(wait);
        Matcher named = NOTE.matcher(holder);
        if (waiting == null || !named.find()) {
            return null;
        }
        TraceContext holding = tracer.traceContextBuilder()
                .traceId(named.group(1))
                .spanId(named.group(2))
                .sampled(true)
                .build();
        Span blocked = tracer.spanBuilder()
                .setParent(waiting.context())
                .name("cerberus.lock.blocked")
                .tag("cerberus.lock.holder", holder)
                .addLink(new Link(holding))
                .start();
        return blocked::end;
    }

    private static Span spanOf(Observation wait) {
        if (wait == null) {
            return null;
        }
        TracingObservationHandler.TracingContext tracing =
                wait.getContext().get(TracingObservationHandler.TracingContext.class);
        return tracing == null ? null : tracing.getSpan();
    }
}
