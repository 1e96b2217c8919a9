package io.scythe.cli;

import io.scythe.bench.history.History;
import io.scythe.bench.history.HistoryReader;
import io.scythe.bench.history.SerializabilityChecker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code scythe check FILE...}: is each recorded history serializable? */
@Command(name = "check", mixinStandardHelpOptions = true,
    description = {"Checks histories recorded by `scythe bench --history` for serializability: builds the direct "
        + "serialization graph (ww, wr, rw dependencies) of the committed transactions and reports each cycle "
        + "(G0 write cycle, G1c circular information flow, G2 anti-dependency cycle) with its transactions, and "
        + "every impossibility (a read of a version nobody made, a version made twice or overwritten twice).",
        "Exit code: 0 every history serializable, 1 a cycle or an impossibility, 2 an unreadable file."})
public final class CheckCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "FILE|DIR",
        description = "History files, or directories whose *.history files are checked.")
    List<Path> files;

    @Accepts(min = "0")
    @Option(names = "--max-cycles", defaultValue = "10",
        description = "Cycles and impossibilities shown in detail per history; all are counted (default: "
            + "${DEFAULT-VALUE}).")
    int maxCycles;

    @Override
    public Integer call() throws Exception {
        if (maxCycles < 0) {
            throw new IllegalArgumentException("--max-cycles " + maxCycles + " must not be negative");
        }
        final java.io.PrintWriter out = spec.commandLine().getOut();
        // CPU time beside wall time: on a shared machine the wall time says more about the neighbours.
        final java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        boolean allSerializable = true;
        for (final Path file : expand(files)) {
            final long start = System.nanoTime();
            final long cpuStart = cpu.getCurrentThreadCpuTime();
            final History history = HistoryReader.read(file);
            final long read = System.nanoTime();
            final long cpuRead = cpu.getCurrentThreadCpuTime();
            final SerializabilityChecker.Result result = SerializabilityChecker.check(history, maxCycles);
            final long checked = System.nanoTime();
            final long cpuChecked = cpu.getCurrentThreadCpuTime();
            out.println(file + " (" + history.label() + ")");
            result.lines().forEach(line -> out.println("  " + line));
            out.printf("  read in %.2f s (%.2f s CPU), checked in %.2f s (%.2f s CPU)%n", (read - start) / 1e9,
                (cpuRead - cpuStart) / 1e9, (checked - read) / 1e9, (cpuChecked - cpuRead) / 1e9);
            allSerializable &= result.serializable();
        }
        return allSerializable ? 0 : 1;
    }

    private static List<Path> expand(final List<Path> paths) throws java.io.IOException {
        final List<Path> out = new java.util.ArrayList<>();
        for (final Path p : paths) {
            if (Files.isDirectory(p)) {
                try (var listing = Files.list(p)) {
                    final List<Path> found = listing.filter(f -> f.toString().endsWith(".history")).sorted().toList();
                    if (found.isEmpty()) {
                        throw new IllegalArgumentException("no *.history file in " + p);
                    }
                    out.addAll(found);
                }
            } else if (!Files.isRegularFile(p)) {
                throw new IllegalArgumentException("no history file " + p);
            } else {
                out.add(p);
            }
        }
        return out;
    }
}
