package io.scythe.node;

import io.scythe.bridge.JvmAccess;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's {@code main} embedding Scythe in a JVM of its own: without the JVM option Agrona needs it fails
 * at once with a message naming it (not an {@code IllegalAccessError} from inside Agrona); a start that fails for
 * any reason leaves no event-loop thread behind, so the JVM exits; a good start and close exit too.
 */
class EmbeddedScytheStartTest {
    private record Exit(int code, String out, String err) {
    }

    private static Exit runChild(final boolean withFlag, final String mode) throws Exception {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
            .toString(), "-Xmx256m", "-XX:+UseSerialGC"));
        if (withFlag) {
            command.addAll(List.of(JvmAccess.AGRONA_FLAG.split(" ")));
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), EmbeddedStartChild.class.getName(),
            mode));
        final Path out = Files.createTempFile("child", ".out");
        final Path err = Files.createTempFile("child", ".err");
        try {
            final Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("the child JVM (" + mode + ") did not exit: threads kept it alive; stderr: "
                    + read(err));
            }
            return new Exit(p.exitValue(), read(out), read(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    private static String read(final Path p) throws IOException {
        return Files.readString(p, StandardCharsets.UTF_8);
    }

    @Test
    void shouldNameTheJvmOptionWhenItIsMissingAndExit() throws Exception {
        final Exit e = runChild(false, "ok");
        assertThat(e.code()).as(e.err()).isNotZero();
        assertThat(e.err()).contains(JvmAccess.AGRONA_FLAG).doesNotContain("IllegalAccessError");
    }

    @Test
    void shouldCloseItsVertxWhenTheStartFailsSoThatTheJvmExits() throws Exception {
        final Exit e = runChild(true, "bad-loader");
        assertThat(e.code()).as(e.err()).isNotZero();
        assertThat(e.err()).contains("the loader must create every table on every node");
    }

    @Test
    void shouldRunAndCloseSoThatTheJvmExits() throws Exception {
        final Exit e = runChild(true, "ok");
        assertThat(e.code()).as(e.err()).isZero();
        assertThat(e.out()).contains("read 0");
    }
}
