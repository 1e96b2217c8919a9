package io.scythe.bench.report;

import io.scythe.bench.micro.OltpWorkload;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * report.html in a real browser (headless Chromium, from the Debian package {@code chromium}): it loads without a
 * console message, the DOM the browser built keeps every section and every point and bar of every chart (markup a
 * browser would drop or misparse shows here, not in a string check), and the page paints its charts. Without a
 * Chromium on the PATH (or at {@code SCYTHE_CHROMIUM}) the test is skipped, unless {@code SCYTHE_REQUIRE_BROWSER} is
 * set (as {@code .ci/run} does, having installed it): then it fails.
 */
class BrowserReportTest {
    private static final long BROWSER_TIMEOUT_S = 90;

    @TempDir
    Path dir;

    private static Path chromium() {
        final String explicit = System.getenv("SCYTHE_CHROMIUM");
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit);
        }
        for (final String name : List.of("chromium", "chromium-browser", "google-chrome")) {
            for (final String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
                final Path p = Path.of(d, name);
                if (Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        return null;
    }

    /** Runs the browser on {@code page} with {@code args}; returns its stderr. Kills it and its children on timeout. */
    private String browse(final Path browser, final Path page, final Path stdout, final String... args)
        throws Exception {
        final List<String> command = new ArrayList<>(List.of(browser.toString(), "--headless=new", "--no-sandbox",
            "--disable-gpu", "--no-first-run", "--disable-extensions", "--user-data-dir=" + dir.resolve("profile"),
            "--enable-logging=stderr", "--v=0"));
        command.addAll(List.of(args));
        command.add(page.toUri().toString());
        final Path stderr = dir.resolve("stderr.txt");
        final Process p = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile())
            .start();
        try {
            assertThat(p.waitFor(BROWSER_TIMEOUT_S, TimeUnit.SECONDS)).as("the browser finished").isTrue();
            assertThat(p.exitValue()).as("browser exit; stderr: %s", Files.readString(stderr)).isZero();
            return Files.readString(stderr);
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    @Test
    void shouldRenderEveryChartInARealBrowserWithoutAConsoleMessage() throws Exception {
        final Path browser = chromium();
        if (browser == null) {
            assertThat(System.getenv("SCYTHE_REQUIRE_BROWSER")).as("SCYTHE_REQUIRE_BROWSER is set but no chromium "
                + "is installed (apt-get install chromium, or SCYTHE_CHROMIUM=path)").isNull();
            Assumptions.abort("no headless browser here (apt-get install chromium)");
        }
        final JsonObject results = new OltpWorkload(new OltpWorkload.Options(List.of("ford-occ", "scythe"),
            List.of(2, 4), 2, 1000, CostModel.profile("zero"), 300, 100, 5), new SmallBankSpec(1000, 0.5, "standard"),
            new PrintStream(java.io.OutputStream.nullOutputStream())).run().toJson();
        final Path page = HtmlReport.write(dir, results);
        final String source = Files.readString(page);

        final Path dom = dir.resolve("dom.html");
        final String log = browse(browser, page, dom, "--dump-dom");
        assertThat(log.lines().filter(l -> l.contains(":CONSOLE")).toList()).as("console messages").isEmpty();
        final String built = Files.readString(dom);
        for (final String section : HtmlReport.SECTIONS) {
            final String mine = ResultsAndReportTest.section(source, section);
            final String browsers = ResultsAndReportTest.section(built, section);
            for (final String element : List.of("<svg", "<circle", "<rect", "<path", "<polyline", "<text", "<tr")) {
                assertThat(count(browsers, element)).as("%s elements in section %s as the browser built it",
                    element, section).isEqualTo(count(mine, element));
            }
        }
        // Every chart has its points: one per run in throughput and P99 against clients.
        final int runs = results.getJsonArray("runs").size();
        assertThat(count(ResultsAndReportTest.section(built, "throughput"), "<circle")).isGreaterThanOrEqualTo(runs);
        assertThat(count(ResultsAndReportTest.section(built, "p99"), "<circle")).isGreaterThanOrEqualTo(runs);
        assertThat(count(ResultsAndReportTest.section(built, "cdf"), "<circle")).isGreaterThan(runs);

        final Path shot = dir.resolve("shot.png");
        browse(browser, page, dir.resolve("shot.out"), "--window-size=1200,3000", "--screenshot=" + shot);
        final BufferedImage image = ImageIO.read(shot.toFile());
        assertThat(image).as("a PNG screenshot").isNotNull();
        final Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y += 2) {
            for (int x = 0; x < image.getWidth(); x += 2) {
                colours.add(image.getRGB(x, y) & 0xffffff);
            }
        }
        // The series palette painted (a blank or unstyled page has a handful of greys).
        assertThat(colours).as("distinct colours painted").hasSizeGreaterThan(50);
    }

    private static int count(final String text, final String needle) {
        int n = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length())) {
            n++;
        }
        return n;
    }
}
