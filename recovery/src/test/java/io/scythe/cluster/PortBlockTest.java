package io.scythe.cluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * JVMs that hand out loopback ports at once each hold a block of their own ({@link LocalCluster#claimPortBlock}): a
 * block another process holds is never claimed until that process is gone, however it ended.
 */
class PortBlockTest {
    @TempDir
    Path dir;

    /** A second JVM: claims a block in the directory it is given, prints it, and holds it until stdin closes. */
    public static void main(final String[] args) throws Exception {
        final LocalCluster.PortBlock block = LocalCluster.claimPortBlock(Path.of(args[0]));
        System.out.println("block " + block.block());
        System.out.flush();
        while (System.in.read() >= 0) {
            // holding
        }
    }

    private Process holder() throws Exception {
        return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
            System.getProperty("java.class.path"), PortBlockTest.class.getName(), dir.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    private static String firstLine(final Process p) throws Exception {
        return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }

    @Test
    void shouldGiveAnotherProcessItsOwnBlockAndFreeABlockWhenItsHolderDies() throws Exception {
        final Process other = holder();
        try {
            assertThat(firstLine(other)).isEqualTo("block 0");
            try (LocalCluster.PortBlock mine = LocalCluster.claimPortBlock(dir)) {
                assertThat(mine.block()).as("block 0 is the other process's").isEqualTo(1);
            }
            other.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            try (LocalCluster.PortBlock mine = LocalCluster.claimPortBlock(dir)) {
                assertThat(mine.block()).as("its holder was killed: the kernel let the lock go").isZero();
            }
        } finally {
            other.destroyForcibly();
        }
    }

    @Test
    void shouldShareTheWholeRangeWhenEveryBlockIsHeld() throws Exception {
        final List<LocalCluster.PortBlock> held = new ArrayList<>();
        try {
            for (int b = 0; b < LocalCluster.PORT_BLOCKS; b++) {
                held.add(LocalCluster.claimPortBlock(dir));
            }
            assertThat(held).extracting(LocalCluster.PortBlock::block).doesNotHaveDuplicates().doesNotContain(-1);
            assertThat(LocalCluster.claimPortBlock(dir).block()).isEqualTo(-1);
            held.remove(3).close();
            try (LocalCluster.PortBlock again = LocalCluster.claimPortBlock(dir)) {
                assertThat(again.block()).as("the one let go").isEqualTo(3);
            }
        } finally {
            for (final LocalCluster.PortBlock p : held) {
                p.close();
            }
        }
    }
}
