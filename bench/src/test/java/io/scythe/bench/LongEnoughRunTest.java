package io.scythe.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LongEnoughRunTest {
    private static JsonObject committed(final long... counts) {
        final JsonArray runs = new JsonArray();
        for (final long c : counts) {
            runs.add(new JsonObject().put("committed", c));
        }
        return new JsonObject().put("runs", runs);
    }

    @Test
    void shouldRunOnceWhenEveryRunCommittedEnough() throws Exception {
        final List<Long> tried = new ArrayList<>();
        final JsonObject r = LongEnoughRun.run(200, 300, (ms, attempt) -> {
            tried.add(ms);
            return committed(200, 5000);
        });
        assertThat(tried).containsExactly(300L);
        assertThat(LongEnoughRun.fewestCommitted(r)).isEqualTo(200);
    }

    @Test
    void shouldRunFourTimesAsLongWhileARunCommittedTooFew() throws Exception {
        final List<String> tried = new ArrayList<>();
        final JsonObject r = LongEnoughRun.run(200, 300, (ms, attempt) -> {
            tried.add(attempt + ":" + ms);
            return committed(5000, ms < 4800 ? 1 : 250);
        });
        assertThat(tried).containsExactly("0:300", "1:1200", "2:4800");
        assertThat(LongEnoughRun.fewestCommitted(r)).isEqualTo(250);
    }

    @Test
    void shouldReturnTheLastTryWhenNoneCommittedEnough() throws Exception {
        final List<Long> tried = new ArrayList<>();
        final JsonObject r = LongEnoughRun.run(200, 1500, (ms, attempt) -> {
            tried.add(ms);
            return committed(ms / 1000);
        });
        assertThat(tried).containsExactly(1500L, 6000L, 24000L);
        assertThat(LongEnoughRun.fewestCommitted(r)).isEqualTo(24);
    }

    @Test
    void shouldSayWhichRunHasNoCommittedCount() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LongEnoughRun.run(200, 300, (ms, attempt) ->
                new JsonObject().put("runs", new JsonArray().add(new JsonObject().put("committed", 500L))
                    .add(new JsonObject().put("completed", 500L)))))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("run 1 of the results has no committed");
    }
}
