package io.cerberus.spring;

import java.io.IOException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Puts the calling thread's fence ({@link FencedCalls#under}) on each outgoing request of a
 * {@code RestClient} or {@code RestTemplate}, as the headers {@value FencedCalls#FENCE_HEADER} and
 * {@value FencedCalls#RESOURCE_HEADER}; a request made outside such a scope goes as it is. Install it
 * with {@code RestClient.builder().requestInterceptor(new FencingRequestInterceptor())}. Stateless.
 */
public class FencingRequestInterceptor implements ClientHttpRequestInterceptor {

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        FencedCalls.current().ifPresent(call -> writeTo(call, request.getHeaders()));
        return execution.execute(request, body);
    }

    /**
     * Sets a call's headers; here, not on {@link FencedCalls}, which applications without spring-web load too.
     *
     * @param call the fence and its resource
     * @param headers a request's headers
     */
    static void writeTo(FencedCalls.Call call, HttpHeaders headers) {
        headers.set(FencedCalls.FENCE_HEADER, call.fence().toString());
        headers.set(FencedCalls.RESOURCE_HEADER, call.resource());
    }
}
