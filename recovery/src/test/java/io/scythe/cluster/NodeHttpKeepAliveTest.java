package io.scythe.cluster;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node's HTTP server closing a kept-alive connection just as a client's next GET arrives on it (its idle timeout
 * firing then: CI 188, "EOF reached while reading" in LotusClusterProcessTest) costs the client nothing: the GET is
 * sent again on a new connection. Made deterministic here: the server ({@link NodeMetrics#httpOptions}) closes every
 * connection at its second request, unanswered. Fails with h2c on (Vert.x's default): Java's client upgrades to HTTP/2
 * and its second GET fails with that EOF.
 */
class NodeHttpKeepAliveTest {
    @Test
    void shouldResendAGetWhoseKeptAliveConnectionTheServerClosed() throws Exception {
        final Vertx vertx = Vertx.vertx();
        try {
            final Map<HttpConnection, AtomicInteger> requests = new ConcurrentHashMap<>();
            final AtomicInteger closed = new AtomicInteger();
            final HttpServer server = vertx.createHttpServer(NodeMetrics.httpOptions(5).setHost("127.0.0.1")
                .setPort(0)).requestHandler(req -> {
                    if (requests.computeIfAbsent(req.connection(), c -> new AtomicInteger()).incrementAndGet() > 1) {
                        closed.incrementAndGet();
                        req.connection().close();
                    } else {
                        req.response().end("ok");
                    }
                });
            final int port = server.listen().await(10, TimeUnit.SECONDS).actualPort();
            final HttpClient client = HttpClient.newHttpClient(); // as the tests' and the CLI's: HTTP/2 preferred
            final java.util.Set<HttpClient.Version> versions = java.util.EnumSet.noneOf(HttpClient.Version.class);
            for (int i = 0; i < 4; i++) {
                final HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/health")).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.body()).as("GET %d", i).isEqualTo("ok");
                versions.add(r.version());
            }
            assertThat(versions).containsExactly(HttpClient.Version.HTTP_1_1);
            assertThat(closed.get()).as("connections the server closed at a request").isGreaterThanOrEqualTo(3);
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }
}
