package io.scythe.cli;

import io.scythe.cluster.NodeWorkload;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's "Built-in procedures" lists every procedure a cluster's workloads register, with its arguments. */
class ReadmeProceduresTest {
    @Test
    void shouldDocumentEveryBuiltInProcedureWithItsArguments() throws Exception {
        final String readme = Files.readString(Path.of("..", "README.md"));
        final String section = readme.substring(readme.indexOf("**Built-in procedures**"),
            readme.indexOf("**Metrics and health**"));
        ClusterWorkloads.register();
        int checked = 0;
        for (final String workload : new String[] {"counters", "smallbank"}) {
            assertThat(section).contains("`" + workload + "`");
            final Map<String, Integer> arities = NodeWorkload.of(new JsonObject().put("name", workload)
                .put("accounts", 16).put("keys", 16)).procedures().arities();
            assertThat(arities).isNotEmpty();
            for (final Map.Entry<String, Integer> p : arities.entrySet()) {
                final Matcher m = Pattern.compile("`" + Pattern.quote(p.getKey()) + "\\(([^)]*)\\)`").matcher(section);
                assertThat(m.find()).as("README documents %s's procedure %s", workload, p.getKey()).isTrue();
                final String args = m.group(1).trim();
                assertThat(args.isEmpty() ? 0 : args.split(",").length).as("%s's arguments", p.getKey())
                    .isEqualTo(p.getValue());
                checked++;
            }
        }
        assertThat(checked).isEqualTo(3 + 7);
    }
}
