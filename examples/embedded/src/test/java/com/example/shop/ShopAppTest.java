package com.example.shop;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs the example application's main and checks what it printed, line by line. */
class ShopAppTest {
    @Test
    void shouldRunTheShopAndPrintWhatEachReplyMeans() throws Exception {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            ShopApp.run(out);
        }
        final String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).hasSize(8);
        assertThat(lines[0]).startsWith("order[3, 5]: committed, result 15 (scythe/")
            .endsWith("1 attempt(s), commit timestamp > 0)");
        assertThat(lines[1]).isEqualTo("order[3, 50]: aborted (user) after 1 attempt(s): aborted (user): item 3: 15 in"
            + " stock, 50 ordered");
        assertThat(lines[2]).startsWith("restock[3, 40]: committed, result 55 ");
        assertThat(lines[3]).startsWith("order[3, 50]: committed, result 5 ");
        assertThat(lines[4]).as("a read-only commit has its timestamp").startsWith("quantity[3]: committed, result 5 ")
            .endsWith("commit timestamp > 0)");
        assertThat(lines[5]).startsWith("refund[3, 1]: rejected (UNKNOWN_PROCEDURE), nothing ran: unknown procedure");
        assertThat(lines[6]).startsWith("order[3]: rejected (BAD_ARGUMENTS), nothing ran: procedure order takes 2");
        assertThat(lines[7]).isEqualTo("closed");
    }
}
