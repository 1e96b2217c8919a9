package io.scythe.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A memory node's HTTP server (/health, /metrics, /copies, /peers/probe) under {@link HttpFuzz}: bad methods, huge
 * paths and headers, lying bodies, garbage, mutated and pipelined requests each get a reply or a close in time (none
 * hangs), requests left half-written are closed by the server, and the node still serves /health and its data is
 * unchanged. {@code -Dscythe.fuzz.calls=N} for more than the suite's 400.
 */
class NodeHttpFuzzTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    @TempDir
    static Path dir;
    private static ScytheNode node;

    @BeforeAll
    static void start() throws Exception {
        final int hazelcast = LocalCluster.freePort();
        node = ScytheNode.start(NodeConfig.of(new JsonObject().put("cluster", "httpfuzz" + ProcessHandle.current().pid())
            .put("secret", "http-fuzz-secret-0123456789").put("node", "mn0").put("hazelcastPort", hazelcast)
            .put("members", new JsonArray(List.of("127.0.0.1:" + hazelcast))).put("httpPort", 0)
            .put("memoryNodes", new JsonArray(List.of("mn0"))).put("fabric", new JsonObject().put("provider", "local"))
            .put("stateDir", dir.toString()).put("workload", new JsonObject().put("name", "counters").put("accounts", 8))),
            NodeRole.MN, () -> { });
    }

    @AfterAll
    static void stop() throws Exception {
        if (node != null) {
            node.close();
        }
    }

    private static HttpResponse<String> get(final String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldAnswerOrCloseEveryMalformedRequestAndStillServeHealth() throws Exception {
        final String copiesBefore = get("/copies").body();
        final InetSocketAddress server = new InetSocketAddress("127.0.0.1", node.httpPort());
        final int requests = Integer.getInteger("scythe.fuzz.calls", 400);
        final Random random = new Random(7);
        final Map<HttpFuzz.Outcome, Integer> outcomes = new EnumMap<>(HttpFuzz.Outcome.class);
        // Half-written requests held open all along: the server must keep serving the others, then close these.
        final List<Socket> slow = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            final Socket s = new Socket();
            s.connect(server, 5_000);
            s.getOutputStream().write(HttpFuzz.partial(random));
            slow.add(s);
        }
        final long started = System.nanoTime();
        for (int i = 0; i < requests; i++) {
            final HttpFuzz.Outcome outcome = HttpFuzz.send(server, HttpFuzz.request(i, random), 5_000);
            outcomes.merge(outcome, 1, Integer::sum);
            assertThat(outcome).as("request %d (kind %d) hung", i, i % 8).isNotEqualTo(HttpFuzz.Outcome.TIMEOUT);
        }
        assertThat(outcomes.getOrDefault(HttpFuzz.Outcome.ERROR_REPLY, 0)).as("error replies: %s", outcomes)
            .isGreaterThan(requests / 4);
        final HttpResponse<String> health = get("/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(new JsonObject(health.body()).getString("status")).isEqualTo("UP");
        assertThat(get("/metrics").body()).contains("scythe_fenced_total");
        assertThat(get("/copies").body()).as("junk changed no data").isEqualTo(copiesBefore);
        // The half-written requests are closed by the server once idle, not held forever.
        for (final Socket s : slow) {
            s.setSoTimeout((NodeMetrics.HTTP_IDLE_TIMEOUT_S + 5) * 1000);
            try (s; InputStream in = s.getInputStream()) {
                in.transferTo(java.io.OutputStream.nullOutputStream()); // ends when the server closes
            } catch (final java.net.SocketException reset) {
                // closed by a reset: closed all the same
            }
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("slow connections closed within the idle timeout")
            .isLessThan(Duration.ofSeconds(NodeMetrics.HTTP_IDLE_TIMEOUT_S + 60));
        System.out.printf("node HTTP fuzz: %d requests %s, 20 slowloris connections closed, in %d ms%n", requests,
            outcomes, (System.nanoTime() - started) / 1_000_000);
    }
}
