package io.cerberus.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.cerberus.EngineUnavailableException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

class ScrubbedErrorsTest {
    private static final String URI = "jdbc:postgresql://app:s3cret@127.0.0.1:5432/app";

    private static String printed(Throwable error) {
        StringWriter text = new StringWriter();
        error.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    @Test
    void anErrorThatShowsNoSecretIsReturnedAsItIs() {
        EngineUnavailableException error =
                new EngineUnavailableException("could not connect", new IOException("refused"));
        assertThat(ScrubbedErrors.scrub(error, URI)).isSameAs(error);
        assertThat(ScrubbedErrors.scrub(error, "mem:")).isSameAs(error);
    }

    @Test
    void aCauseThatEchoesThePasswordIsCopiedWithItHiddenAndReadsTheSame() {
        UnknownHostException echo = new UnknownHostException("app:s3cret@127.0.0.1");
        IOException wrapper = new IOException("The connection attempt failed.", echo);
        wrapper.addSuppressed(new IllegalStateException("retry to s3cret@host failed"));
        EngineUnavailableException error = new EngineUnavailableException(
                "could not connect to jdbc:postgresql://****@127.0.0.1:5432/app", wrapper);

        RuntimeException shown = ScrubbedErrors.scrub(error, URI);

        assertThat(shown).isInstanceOf(EngineUnavailableException.class).hasMessage(error.getMessage());
        assertThat(shown.getStackTrace()).isEqualTo(error.getStackTrace());
        assertThat(printed(shown))
                .doesNotContain("s3cret")
                .contains("java.io.IOException: The connection attempt failed.")
                .contains("java.net.UnknownHostException: app:****@127.0.0.1")
                .contains("java.lang.IllegalStateException: retry to ****@host failed");
        assertThat(printed(error)).as("the original is left alone").contains("s3cret");
    }

    @Test
    void aTopOfAnotherTypeIsCopiedUnderItsName() {
        RuntimeException error = new UnsupportedOperationException("cannot parse s3cret");
        RuntimeException shown = ScrubbedErrors.scrub(error, URI);
        assertThat(shown.toString()).isEqualTo("java.lang.UnsupportedOperationException: cannot parse ****");
    }
}
