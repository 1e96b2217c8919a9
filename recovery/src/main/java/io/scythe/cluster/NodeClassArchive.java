package io.scythe.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An AppCDS archive of the node JVMs' classes (issue 23 §1: a process test boots 4-6 node JVMs, each loading and
 * verifying ~8,000 Hazelcast, Vert.x, Netty and Scythe classes from jars on 2 shared cores). On only when the system
 * property {@value #DIR_PROPERTY} names a directory (the build's surefire sets it to {@code target/node-cds}); without
 * it nodes start as before.
 *
 * <p>The first compute node a JVM launches while no archive exists for the node class path dumps one when it exits
 * ({@code -XX:ArchiveClassesAtExit}, into a file of its own); once that process is gone the file is renamed to the
 * archive's name, and every node launched after maps it ({@code -XX:SharedArchiveFile}). The name is a hash of the
 * JVM's version and of the class path with each jar's size and modification time, so a rebuilt jar or another JDK gets
 * a new archive rather than a mismatched one. A missing, partial or refused archive costs nothing: the JVM starts
 * without it ({@code -Xshare:auto}, the default) and its CDS messages are off.
 *
 * <p>JDK 17 refuses to dump when a class was loaded from a directory on the class path ("Cannot have non-empty
 * directory in paths"; a build's {@code target/classes}), so with the archive on, {@link #packed} replaces each
 * directory by a jar of its contents, in place.
 */
final class NodeClassArchive {
    /** The system property naming the archive directory. */
    static final String DIR_PROPERTY = "scythe.node.cds";
    /** JVM options that keep CDS warnings (an archive that does not match) out of the node's log. */
    private static final List<String> QUIET = List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off",
        "-Xlog:class+path=off");

    /** The dump under way in this JVM: its process and the file it writes at exit. */
    private static Process dumping;
    private static Path dumpFile;
    private static Path dumpTarget;

    private NodeClassArchive() {
    }

    /** Whether the archive is on ({@value #DIR_PROPERTY} set, not blank). */
    static boolean enabled() {
        return !System.getProperty(DIR_PROPERTY, "").isBlank();
    }

    /** Directories of the class path already packed in this JVM, and their jars. */
    private static final java.util.Map<String, String> PACKED = new java.util.HashMap<>();

    /**
     * {@code classpath} with each directory replaced, in place, by a jar of its contents (made once per content in the
     * archive directory); the jars are as they are. Class lookup order is unchanged.
     */
    static synchronized String packed(final String classpath) {
        final List<String> entries = new ArrayList<>();
        for (final String entry : classpath.split(java.io.File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            if (!Files.isDirectory(Path.of(entry))) {
                entries.add(entry);
                continue;
            }
            String jar = PACKED.get(entry);
            if (jar == null) {
                try {
                    jar = pack(Path.of(entry)).toString();
                } catch (final IOException e) {
                    return classpath; // nodes start from the directories, without an archive of them
                }
                PACKED.put(entry, jar);
            }
            entries.add(jar);
        }
        return String.join(java.io.File.pathSeparator, entries);
    }

    /** A jar of {@code dir}'s files, named by a hash of their names, sizes and times (kept if it exists). */
    private static Path pack(final Path dir) throws IOException {
        final List<Path> files;
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(Files::isRegularFile).sorted().toList();
        }
        final MessageDigest digest = sha256();
        digest.update((dir.toAbsolutePath() + "\n").getBytes(StandardCharsets.UTF_8));
        for (final Path f : files) {
            digest.update((dir.relativize(f) + "|" + Files.size(f) + "|" + Files.getLastModifiedTime(f).toMillis()
                + "\n").getBytes(StandardCharsets.UTF_8));
        }
        final Path archiveDir = Path.of(System.getProperty(DIR_PROPERTY));
        Files.createDirectories(archiveDir);
        final Path jar = archiveDir.resolve("classes-" + HexFormat.of().formatHex(digest.digest()).substring(0, 16)
            + ".jar");
        if (Files.isRegularFile(jar)) {
            return jar;
        }
        final Path tmp = jar.resolveSibling(jar.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        try (java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(Files.newOutputStream(tmp))) {
            for (final Path f : files) {
                out.putNextEntry(new java.util.jar.JarEntry(dir.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
        Files.move(tmp, jar, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return jar;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is unavailable in this JVM", e);
        }
    }

    /**
     * The JVM options for a node about to start with {@code classpath}: map the archive if there is one; else, for a
     * {@code candidate} (a compute node) and no dump under way, dump one at exit ({@link #started} is told the
     * process). Empty when the archive is off.
     */
    static synchronized List<String> options(final String classpath, final boolean candidate) {
        if (!enabled()) {
            return List.of();
        }
        publish();
        final Path archive = archive(classpath);
        final List<String> options = new ArrayList<>(QUIET);
        if (Files.isRegularFile(archive)) {
            options.add("-XX:SharedArchiveFile=" + archive);
        } else if (candidate && dumpFile == null) {
            try {
                Files.createDirectories(archive.getParent());
            } catch (final IOException e) {
                return List.of();
            }
            dumpTarget = archive;
            dumpFile = archive.resolveSibling(archive.getFileName() + "." + ProcessHandle.current().pid() + "-"
                + System.nanoTime() + ".tmp");
            options.add("-XX:ArchiveClassesAtExit=" + dumpFile);
        }
        return options;
    }

    /** The process just started with the options {@link #options} gave last (the dumping one, if it dumps). */
    static synchronized void started(final List<String> options, final Process process) {
        if (dumpFile != null && dumping == null && options.contains("-XX:ArchiveClassesAtExit=" + dumpFile)) {
            dumping = process;
        }
    }

    /** The dump {@link #options} asked for last is not under way (its process did not start): the next CN dumps. */
    static synchronized void cancel() {
        if (dumping == null) {
            dumpFile = null;
            dumpTarget = null;
        }
    }

    /**
     * Whether {@code process} dumps the archive at exit (it takes seconds more to exit) and that dump is still wanted:
     * not once another JVM (the other surefire fork) published the archive, whose dump {@link #publish} would delete
     * (CI 130: CnKillProcessTest's cluster took 15.8 s to stop, its CN writing an archive the other fork had
     * published).
     */
    static synchronized boolean dumps(final Process process) {
        return process == dumping && dumpTarget != null && !Files.exists(dumpTarget);
    }

    /**
     * Once the dumping process is gone: its file becomes the archive if it wrote one (a killed node wrote none; the
     * next compute node launched dumps instead).
     */
    static synchronized void publish() {
        if (dumpFile == null || dumping == null || dumping.isAlive()) {
            return;
        }
        try {
            // Published only after a clean exit (0, or 143: the SIGTERM a cluster's close sends): a node killed or
            // crashed while it dumped left a partial file, one that exited before it joined (EXIT_NOT_JOINED) an
            // archive of its start-up classes alone.
            final int exit = dumping.exitValue();
            final boolean written = (exit == 0 || exit == 143) && Files.isRegularFile(dumpFile)
                && Files.size(dumpFile) > 0;
            if (!written) {
                System.out.println("node class archive " + dumpTarget + " not written: its node exited with "
                    + dumping.exitValue() + (Files.exists(dumpFile) ? "" : ", no file"));
            } else if (!Files.exists(dumpTarget)) {
                Files.move(dumpFile, dumpTarget, StandardCopyOption.ATOMIC_MOVE);
                System.out.println("node class archive " + dumpTarget + " (" + Files.size(dumpTarget) / 1024
                    + " KiB): the nodes started from now on map it");
                prune(dumpTarget);
            }
            Files.deleteIfExists(dumpFile);
        } catch (final IOException e) {
            // another JVM published it first, or the directory went away: nodes start without it
        }
        dumping = null;
        dumpFile = null;
        dumpTarget = null;
    }

    /**
     * Removes what earlier builds left in the archive directory (tens of MB per archive): archives other than
     * {@code current}, class jars this JVM's node class path does not use, dump files older than ten minutes (a test JVM
     * that died while its node dumped). Best effort.
     */
    private static void prune(final Path current) {
        final long stale = System.currentTimeMillis() - TimeUnit.MINUTES.toMillis(10);
        try (java.util.stream.Stream<Path> files = Files.list(current.getParent())) {
            for (final Path f : files.toList()) {
                final String name = f.getFileName().toString();
                final boolean old = name.endsWith(".tmp") ? Files.getLastModifiedTime(f).toMillis() < stale
                    : name.endsWith(".jsa") ? !f.equals(current)
                    : name.endsWith(".jar") && !PACKED.containsValue(f.toString());
                if (old) {
                    Files.deleteIfExists(f);
                }
            }
        } catch (final IOException e) {
            // left for the next publication, or a clean build
        }
    }

    /** The archive of {@code classpath} under this JVM. */
    private static Path archive(final String classpath) {
        final MessageDigest digest = sha256();
        digest.update((System.getProperty("java.vm.version") + "\n" + System.getProperty("java.home") + "\n")
            .getBytes(StandardCharsets.UTF_8));
        for (final String entry : classpath.split(java.io.File.pathSeparator)) {
            final Path p = Path.of(entry);
            long size = -1;
            long modified = -1;
            if (entry.endsWith(".jar")) {
                try {
                    size = Files.size(p);
                    modified = Files.getLastModifiedTime(p).toMillis();
                } catch (final IOException missing) {
                    // keyed as missing
                }
            }
            digest.update((entry + "|" + size + "|" + modified + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return Path.of(System.getProperty(DIR_PROPERTY))
            .resolve("node-" + HexFormat.of().formatHex(digest.digest()).substring(0, 16) + ".jsa");
    }
}
