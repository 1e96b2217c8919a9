package io.scythe.cli;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What docker/ promises and no Docker engine here can run: the image's dependency layer copies every module's pom
 * (the build after it runs offline: a missing pom fails it, which {@code || true} used to hide), the compose file names only files that
 * exist and keeps the secret out of the environment, Prometheus scrapes every node, and the build context leaves key
 * stores and secrets out.
 */
class DockerFilesTest {
    private static final Path ROOT = Path.of("..");

    @Test
    void shouldCopyEveryModulesPomIntoTheDependencyLayer() throws Exception {
        final String dockerfile = Files.readString(ROOT.resolve("docker/Dockerfile"));
        final List<String> modules = new ArrayList<>();
        final Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(ROOT.resolve("pom.xml")));
        while (m.find()) {
            modules.add(m.group(1));
        }
        assertThat(modules).hasSizeGreaterThan(5);
        for (final String module : modules) {
            assertThat(dockerfile).as("docker/Dockerfile copies %s/pom.xml into its dependency layer", module)
                .contains("COPY " + module + "/pom.xml " + module + "/");
        }
        final String layer = dockerfile.substring(0, dockerfile.indexOf("COPY . ."));
        assertThat(layer).contains("RUN mvn -B -q -DskipTests package").doesNotContain("|| true");
        assertThat(dockerfile.substring(dockerfile.indexOf("COPY . ."))).contains("mvn -B -q -o -DskipTests package");
        assertThat(dockerfile).contains("USER scythe").contains("HEALTHCHECK").contains("healthcheck.sh");
        assertThat(ROOT.resolve("docker/healthcheck.sh")).exists();
    }

    @Test
    void shouldNameOnlyFilesThatExistAndKeepTheSecretInAFile() throws Exception {
        final String compose = Files.readString(ROOT.resolve("docker/compose.yaml"));
        final Matcher mount = Pattern.compile("- \\./([^:]+):").matcher(compose);
        int mounts = 0;
        while (mount.find()) {
            mounts++;
            final String path = mount.group(1);
            if (!path.equals("conf/eventbus.p12")) { // made by the user with keytool (docker/README.md)
                assertThat(ROOT.resolve("docker").resolve(path)).as("compose mounts ./%s", path).exists();
            }
        }
        assertThat(mounts).isGreaterThan(4);
        assertThat(compose).contains("SCYTHE_SECRET_FILE: /run/secrets/scythe_secret")
            .doesNotContain("SCYTHE_SECRET:").contains("condition: service_healthy");
        final String prometheus = Files.readString(ROOT.resolve("docker/prometheus/prometheus.yml"));
        final Matcher node = Pattern.compile("SCYTHE_HOST: ([0-9.]+)").matcher(compose);
        int nodes = 0;
        while (node.find()) {
            nodes++;
            assertThat(prometheus).as("Prometheus scrapes %s", node.group(1)).contains(node.group(1) + ":9100");
        }
        assertThat(nodes).isEqualTo(7);
        final String ignored = Files.readString(ROOT.resolve(".dockerignore"));
        assertThat(ignored).contains("**/*.p12").contains("docker/secrets").contains("results");
    }
}
