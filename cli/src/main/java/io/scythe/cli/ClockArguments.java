package io.scythe.cli;

import io.scythe.config.ConfigFiles;
import io.scythe.fabric.ClockDeviation;
import io.scythe.fabric.ClockOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The clock options of {@code scythe sim}, made into {@link ClockOptions}: a {@code clocks} file
 * ({@code conf/fabric/clocks.yaml}), then {@code --clock [NODE.]nic|host=OFFSET_NS[,DRIFT_PPM]} (every node's clock,
 * or one node's) and {@code --clock-spread nic|host=OFFSET_NS[,DRIFT_PPM]} (half-widths of each node's draw) on top.
 * The draws follow the run's seed unless the file names one.
 */
final class ClockArguments {
    private ClockArguments() {
    }

    static ClockOptions parse(final Path file, final List<String> clocks, final List<String> spreads,
                              final long seed) throws Exception {
        final JsonObject json = file == null ? new JsonObject() : read(file);
        final ClockOptions options = new ClockOptions(json);
        if (!json.getJsonObject("spread", new JsonObject()).containsKey("seed")) {
            options.seed(seed);
        }
        for (final String clock : clocks) {
            final int eq = clock.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("--clock " + clock + " must be [NODE.]nic|host=OFFSET_NS[,DRIFT_PPM]");
            }
            final String which = clock.substring(0, eq);
            final ClockDeviation deviation = deviation("--clock", clock, clock.substring(eq + 1));
            final int dot = which.lastIndexOf('.');
            final String kind = which.substring(dot + 1);
            final String node = dot < 0 ? null : which.substring(0, dot);
            if ("nic".equals(kind)) {
                if (node == null) {
                    options.nic(deviation);
                } else {
                    options.nodeNic(node, deviation);
                }
            } else if ("host".equals(kind)) {
                if (node == null) {
                    options.host(deviation);
                } else {
                    options.nodeHost(node, deviation);
                }
            } else {
                throw new IllegalArgumentException("--clock " + clock + ": the clock is nic or host, not '" + kind
                    + "' (NODE.nic names one node's)");
            }
        }
        for (final String spread : spreads) {
            final int eq = spread.indexOf('=');
            final String kind = eq < 0 ? "" : spread.substring(0, eq);
            if (!"nic".equals(kind) && !"host".equals(kind)) {
                throw new IllegalArgumentException("--clock-spread " + spread + " must be nic|host=OFFSET_NS[,DRIFT_PPM]");
            }
            final ClockDeviation width = deviation("--clock-spread", spread, spread.substring(eq + 1));
            options.spread("nic".equals(kind) ? width : options.nicSpread(),
                "host".equals(kind) ? width : options.hostSpread());
        }
        return options.validate();
    }

    private static ClockDeviation deviation(final String option, final String whole, final String value) {
        final String[] parts = value.split(",", -1);
        try {
            if (parts.length > 2) {
                throw new NumberFormatException();
            }
            return new ClockDeviation(Long.parseLong(parts[0].trim()),
                parts.length == 2 ? Double.parseDouble(parts[1].trim()) : 0);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + whole + ": the value is OFFSET_NS (an integer) and "
                + "optionally ,DRIFT_PPM (a number)", e);
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " " + whole + ": " + e.getMessage(), e);
        }
    }

    private static JsonObject read(final Path file) throws Exception {
        final Vertx vertx = Vertx.vertx();
        try {
            return ConfigFiles.read(vertx, file).await(30, TimeUnit.SECONDS);
        } finally {
            vertx.close().await(30, TimeUnit.SECONDS);
        }
    }
}
