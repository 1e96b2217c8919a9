package io.scythe.cluster;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.MicrometerMetricsFactory;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/** A node's metrics registry: what micrometer logs about meters registered twice. */
class NodeMetricsTest {

    /**
     * Every node start logged micrometer's "This Gauge has been already registered" for a Vert.x gauge
     * (vertx-micrometer registers {@code vertx.eventbus.handlers} again for each address): dropped now; a Scythe
     * gauge registered twice is still logged, as a WARNING, with the logger at the level the node sets: micrometer
     * warns once per JVM and then logs at FINE, and that once goes to the first Vert.x gauge.
     */
    @Test
    void shouldDropTheDoubleRegistrationOfVertxGaugesOnlyNotOurs() throws Exception {
        final List<LogRecord> logged = new CopyOnWriteArrayList<>();
        final Handler capture = new Handler() {
            @Override
            public void publish(final LogRecord record) {
                logged.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        final Level level = NodeMetrics.DOUBLE_REGISTRATION_LOG.getLevel();
        NodeMetrics.DOUBLE_REGISTRATION_LOG.addHandler(capture);
        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        final Vertx vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(NodeMetrics.vertxMetrics()))
            .withMetrics(new MicrometerMetricsFactory(registry)).build();
        try {
            NodeMetrics.quietVertxGaugeRegistrations();
            for (int i = 0; i < 3; i++) {
                vertx.eventBus().consumer("nodemetrics.test." + i, m -> { });
            }
            assertThat(registry.find("vertx.eventbus.handlers").gauge()).isNotNull();
            for (int i = 0; i < 2; i++) {
                Gauge.builder("scythe.test.gauge", () -> 1).register(registry);
            }
            assertThat(logged).noneMatch(r -> r.getMessage().contains("vertx."));
            assertThat(logged).filteredOn(r -> r.getMessage().contains("MeterId{name='scythe.test.gauge'"))
                .isNotEmpty().allMatch(r -> r.getLevel() == Level.WARNING);
        } finally {
            NodeMetrics.DOUBLE_REGISTRATION_LOG.removeHandler(capture);
            NodeMetrics.DOUBLE_REGISTRATION_LOG.setLevel(level);
            vertx.close().await(10, TimeUnit.SECONDS);
            registry.close();
        }
    }
}
