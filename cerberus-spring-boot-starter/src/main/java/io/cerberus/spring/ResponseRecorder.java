package io.cerberus.spring;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.springframework.web.filter.ShallowEtagHeaderFilter;

/**
 * The response of a guarded request, recorded to be stored for replay, in bounded memory.
 *
 * <p>Invariants: at most {@code limit} bytes of body are ever kept. While the body fits, nothing
 * reaches the client (so the exchange can settle its key before the client sees the response) and
 * the content length is set from what was recorded. The first write that would pass the limit
 * calls the {@link Overflow} once, before any byte goes out (the exchange settles its key then),
 * copies what was kept to the client and passes every later byte straight through: a response of
 * any size streams with {@code limit} bytes of memory. A response that Spring streams (SSE,
 * {@code StreamingResponseBody}: marked as {@link ShallowEtagHeaderFilter#disableContentCaching}
 * does) passes straight through from its first byte and is never stored.
 *
 * <p>Not thread-safe, as a servlet response is not: one thread writes at a time.
 */
final class ResponseRecorder extends HttpServletResponseWrapper {
    /** Set by {@link ShallowEtagHeaderFilter#disableContentCaching}, whose constant is private. */
    private static final String STREAMING = ShallowEtagHeaderFilter.class.getName() + ".STREAMING";

    /** Told once, before the first byte of a response larger than the limit goes to the client. */
    interface Overflow {
        /** @param status the response's status, final from now on */
        void passedLimit(int status);
    }

    private final ServletRequest request;
    private final long limit;
    private final Overflow overflow;
    private byte[] kept = new byte[0];
    private int size;
    /** Whether the body goes straight to the client (it passed the limit). */
    private boolean passing;
    /** The length the application declared, passed on only when the body goes through. */
    private Long declaredLength;

    private ServletOutputStream stream;
    private PrintWriter writer;

    /**
     * @param limit the largest body kept, in bytes
     * @param overflow told when the body passes the limit
     */
    ResponseRecorder(HttpServletResponse response, ServletRequest request, long limit, Overflow overflow) {
        super(response);
        this.request = request;
        this.limit = limit;
        this.overflow = overflow;
    }

    /** @return whether Spring streams this response (it is never stored) */
    boolean streamed() {
        return request.getAttribute(STREAMING) != null;
    }

    /** @return the body kept so far (the whole body, unless it passed the limit) */
    byte[] body() {
        flushWriter();
        return Arrays.copyOf(kept, size);
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
        if (streamed()) {
            sendKept(false);
            return getResponse().getOutputStream();
        }
        if (writer != null) {
            throw new IllegalStateException("getWriter() was already called for this response");
        }
        if (stream == null) {
            stream = new RecordingStream();
        }
        return stream;
    }

    @Override
    public PrintWriter getWriter() throws IOException {
        if (streamed()) {
            sendKept(false);
            return getResponse().getWriter();
        }
        if (stream != null) {
            throw new IllegalStateException("getOutputStream() was already called for this response");
        }
        if (writer == null) {
            String encoding = getCharacterEncoding();
            Charset charset = encoding == null ? StandardCharsets.ISO_8859_1 : Charset.forName(encoding);
            writer = new PrintWriter(new OutputStreamWriter(new RecordingStream(), charset));
        }
        return writer;
    }

    @Override
    public void flushBuffer() throws IOException {
        if (passing || streamed()) {
            flushWriter();
            getResponse().flushBuffer();
        }
        // otherwise nothing goes out before the exchange has settled
    }

    @Override
    public void setContentLength(int length) {
        setContentLengthLong(length);
    }

    @Override
    public void setContentLengthLong(long length) {
        if (passing || streamed()) {
            super.setContentLengthLong(length);
        } else {
            declaredLength = length;
        }
    }

    @Override
    public void setHeader(String name, String value) {
        if (isContentLength(name) && !passing && !streamed()) {
            declaredLength = value == null ? null : Long.valueOf(value.trim());
        } else {
            super.setHeader(name, value);
        }
    }

    @Override
    public void addHeader(String name, String value) {
        if (isContentLength(name) && !passing && !streamed()) {
            declaredLength = Long.valueOf(value.trim());
        } else {
            super.addHeader(name, value);
        }
    }

    @Override
    public void setIntHeader(String name, int value) {
        if (isContentLength(name) && !passing && !streamed()) {
            declaredLength = (long) value;
        } else {
            super.setIntHeader(name, value);
        }
    }

    @Override
    public void addIntHeader(String name, int value) {
        setIntHeader(name, value);
    }

    private static boolean isContentLength(String name) {
        return "Content-Length".equalsIgnoreCase(name);
    }

    /** Forgets the body kept; once the body passed the limit the response is committed and this throws. */
    @Override
    public void resetBuffer() {
        super.resetBuffer();
        size = 0;
    }

    @Override
    public void reset() {
        super.reset();
        size = 0;
        declaredLength = null;
    }

    @Override
    public void sendError(int status) throws IOException {
        sendKept(false);
        super.sendError(status);
    }

    @Override
    public void sendError(int status, String message) throws IOException {
        sendKept(false);
        super.sendError(status, message);
    }

    @Override
    public void sendRedirect(String location) throws IOException {
        sendKept(false);
        super.sendRedirect(location);
    }

    /**
     * Forgets the response recorded so far (status, headers and the body kept), so that another answer can be
     * written to the client instead.
     *
     * @return false if nothing can be forgotten any more: part of the response went to the client
     */
    boolean discardKept() {
        if (passing || streamed() || getResponse().isCommitted()) {
            return false;
        }
        flushWriter();
        reset();
        return true;
    }

    /**
     * Sends what was kept to the client, with its length when the response is not committed yet.
     *
     * @param complete whether the body is complete (the last call): the length is then what was kept
     */
    void sendKept(boolean complete) throws IOException {
        flushWriter();
        HttpServletResponse raw = (HttpServletResponse) getResponse();
        if (!raw.isCommitted()) {
            if (complete && size > 0) {
                raw.setContentLengthLong(size);
            } else if (declaredLength != null && (complete || size > 0)) {
                raw.setContentLengthLong(declaredLength);
            }
        }
        if (size > 0) {
            raw.getOutputStream().write(kept, 0, size);
            size = 0;
        }
        if (complete) {
            raw.flushBuffer();
        }
    }

    private void flushWriter() {
        if (writer != null) {
            writer.flush();
        }
    }

    private void write(byte[] bytes, int offset, int length) throws IOException {
        if (!passing && (long) size + length > limit) {
            passing = true;
            overflow.passedLimit(getStatus());
            if (declaredLength != null && !getResponse().isCommitted()) {
                super.setContentLengthLong(declaredLength);
            }
            sendKept(false);
            kept = new byte[0];
        }
        if (passing) {
            getResponse().getOutputStream().write(bytes, offset, length);
            return;
        }
        if (size + length > kept.length) {
            long grown = Math.max((long) size + length, Math.max(256, (long) kept.length * 2));
            kept = Arrays.copyOf(kept, (int) Math.min(grown, limit));
        }
        System.arraycopy(bytes, offset, kept, size, length);
        size += length;
    }

    /** The application's body: kept up to the limit, then passed through. */
    private final class RecordingStream extends ServletOutputStream {
        private final byte[] one = new byte[1];

        @Override
        public void write(int b) throws IOException {
            one[0] = (byte) b;
            ResponseRecorder.this.write(one, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            ResponseRecorder.this.write(bytes, offset, length);
        }

        @Override
        public void flush() throws IOException {
            if (passing) {
                getResponse().getOutputStream().flush();
            }
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {
            throw new UnsupportedOperationException(
                    "a response guarded by the Idempotency-Key filter is written blocking");
        }
    }
}
