package io.scythe.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeClassArchiveTest {
    @Test
    void shouldReplaceEachDirectoryInPlaceByAJarOfItsFilesAndKeepTheJars(@TempDir final Path tmp) throws Exception {
        final String before = System.getProperty(NodeClassArchive.DIR_PROPERTY);
        System.setProperty(NodeClassArchive.DIR_PROPERTY, tmp.resolve("cds").toString());
        try {
            final Path classes = Files.createDirectories(tmp.resolve("classes/io/x"));
            Files.writeString(classes.resolve("A.class"), "a");
            final Path jar = Files.writeString(tmp.resolve("dep.jar"), "not read");
            final String cp = String.join(File.pathSeparator, jar.toString(), tmp.resolve("classes").toString(),
                tmp.resolve("missing.jar").toString());
            final List<String> packed = List.of(NodeClassArchive.packed(cp).split(File.pathSeparator));
            assertThat(packed).hasSize(3);
            assertThat(packed.get(0)).isEqualTo(jar.toString());
            assertThat(packed.get(1)).startsWith(tmp.resolve("cds").resolve("classes-").toString()).endsWith(".jar");
            assertThat(packed.get(2)).isEqualTo(tmp.resolve("missing.jar").toString());
            try (JarFile made = new JarFile(packed.get(1))) {
                assertThat(new String(made.getInputStream(made.getEntry("io/x/A.class")).readAllBytes()))
                    .isEqualTo("a");
            }
            // No archive yet: a compute node is asked to dump one, a memory node starts without.
            final String nodeCp = String.join(File.pathSeparator, packed);
            assertThat(NodeClassArchive.options(nodeCp, false)).noneMatch(o -> o.startsWith("-XX:Shared")
                || o.startsWith("-XX:ArchiveClassesAtExit"));
            assertThat(NodeClassArchive.options(nodeCp, true))
                .anyMatch(o -> o.startsWith("-XX:ArchiveClassesAtExit=" + tmp.resolve("cds")));
        } finally {
            NodeClassArchive.cancel();
            if (before == null) {
                System.clearProperty(NodeClassArchive.DIR_PROPERTY);
            } else {
                System.setProperty(NodeClassArchive.DIR_PROPERTY, before);
            }
        }
    }
}
