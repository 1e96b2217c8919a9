package io.scythe.bench.micro;

import io.scythe.bench.report.ProgressLine;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The live progress of a run: reported about once a second with the counts so far; the line's two forms. */
class ClosedLoopProgressTest {
    @Test
    void shouldReportProgressOnceASecondWithTheCountsSoFar() throws Exception {
        final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        try {
            final List<io.vertx.core.Context> loops = List.of(vertx.getOrCreateContext(), vertx.getOrCreateContext());
            final List<long[]> updates = new ArrayList<>();
            final ClosedLoop.Result r = ClosedLoop.run(loops, 3, 0, 2_300,
                () -> Future.future(p -> vertx.setTimer(1, t -> p.complete())),
                (elapsedNs, completed, failed, latency) -> updates.add(new long[] {elapsedNs, completed,
                    latency.getTotalCount()}));
            // About once a second: 1 or 2 updates in 2.3 s (a stalled timer on a loaded machine may leave only
            // one), never before 1 s, each at least ~1 s after the one before; counts growing, within the total.
            assertThat(updates).hasSizeBetween(1, 2);
            assertThat(updates.get(0)[0]).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(1_000));
            assertThat(updates.get(0)[1]).isPositive().isEqualTo(updates.get(0)[2]);
            if (updates.size() == 2) {
                assertThat(updates.get(1)[0] - updates.get(0)[0]).isGreaterThanOrEqualTo(
                    TimeUnit.MILLISECONDS.toNanos(900));
                assertThat(updates.get(1)[1]).isGreaterThan(updates.get(0)[1]);
            }
            assertThat(updates.get(updates.size() - 1)[1]).isLessThanOrEqualTo(r.completed());
        } finally {
            vertx.close().await(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldOverwriteInPlaceOnATerminalAndPrintLinesOtherwise() {
        final ByteArrayOutputStream tty = new ByteArrayOutputStream();
        final ProgressLine inPlace = new ProgressLine(new PrintStream(tty, true), true);
        inPlace.update("scythe clients 64", 1.0, 123_456, 0.0125, 98.7);
        inPlace.update("scythe clients 64", 2.0, 123_000, 0.0125, 98.7);
        inPlace.done();
        assertThat(tty.toString()).startsWith("\r").doesNotContain("\n").contains("123,456 committed/s",
            "abort rate 0.013", "p99      98.7 us").endsWith("\r\u001b[K");

        final ByteArrayOutputStream pipe = new ByteArrayOutputStream();
        final ProgressLine lines = new ProgressLine(new PrintStream(pipe, true), false);
        lines.update("ford-occ clients 8", 1.0, 1000, 0, 10);
        lines.update("ford-occ clients 8", 2.0, 1000, 0, 10);
        lines.done();
        assertThat(pipe.toString().lines()).hasSize(2).allMatch(l -> l.startsWith("ford-occ clients 8"));
        assertThat(pipe.toString()).doesNotContain("\r", "\u001b");
    }
}
