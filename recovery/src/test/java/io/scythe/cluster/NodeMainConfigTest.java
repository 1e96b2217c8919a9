package io.scythe.cluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The environment a container gives a node: its name, address and secret, the secret possibly from a file. */
class NodeMainConfigTest {
    @TempDir
    Path dir;

    private Path config() throws Exception {
        final Path file = dir.resolve("cluster.yaml");
        Files.writeString(file, """
            cluster: scythe
            members: ["127.0.0.1:5701"]
            memoryNodes: [mn0]
            tsoNode: tso
            """);
        return file;
    }

    @Test
    void shouldTakeNameHostAndSecretFromTheEnvironment() throws Exception {
        final NodeConfig c = NodeMain.readConfig(config(), Map.of("SCYTHE_NODE", "cn2", "SCYTHE_HOST", "127.0.0.1",
            "SCYTHE_SECRET", "sixteen-chars-or-more"));
        assertThat(c.node()).isEqualTo("cn2");
        assertThat(c.host()).isEqualTo("127.0.0.1");
        assertThat(c.secret()).isEqualTo("sixteen-chars-or-more");
    }

    @Test
    void shouldReadTheSecretFromAMountedSecretFileWithoutItsNewline() throws Exception {
        final Path secret = dir.resolve("scythe_secret");
        Files.writeString(secret, "from-a-compose-secret-file\n");
        final NodeConfig c = NodeMain.readConfig(config(), Map.of("SCYTHE_NODE", "mn0", "SCYTHE_HOST", "127.0.0.1",
            "SCYTHE_SECRET_FILE", secret.toString()));
        assertThat(c.secret()).isEqualTo("from-a-compose-secret-file");
    }

    @Test
    void shouldRefuseAnUnreadableSecretFileOrTwoSecrets() throws Exception {
        final Path config = config();
        assertThatThrownBy(() -> NodeMain.readConfig(config, Map.of("SCYTHE_NODE", "mn0", "SCYTHE_HOST", "127.0.0.1",
            "SCYTHE_SECRET_FILE", dir.resolve("absent").toString())))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SCYTHE_SECRET_FILE")
            .hasMessageContaining("cannot be read");
        final Path secret = dir.resolve("s");
        Files.writeString(secret, "from-a-compose-secret-file");
        assertThatThrownBy(() -> NodeMain.readConfig(config, Map.of("SCYTHE_NODE", "mn0", "SCYTHE_HOST", "127.0.0.1",
            "SCYTHE_SECRET", "sixteen-chars-or-more", "SCYTHE_SECRET_FILE", secret.toString())))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("give one");
    }
}
