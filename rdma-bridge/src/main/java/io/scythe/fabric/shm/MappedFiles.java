package io.scythe.fabric.shm;

import io.scythe.fabric.FabricException;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Creating, mapping and removing the shm fabric's files. Mappings are never unmapped by hand: a buffer another
 * thread still reads would crash the JVM; the garbage collector unmaps them when nothing refers to them, and a
 * deleted file's pages live until then.
 */
final class MappedFiles {
    private MappedFiles() {
    }

    /** Creates {@code file} (which must not exist) of {@code bytes} zeroed bytes and maps it. */
    static UnsafeBuffer create(final Path file, final long bytes) {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE)) {
            channel.truncate(bytes);
            channel.position(bytes - 1);
            channel.write(java.nio.ByteBuffer.wrap(new byte[1]));
            return wrap(channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes));
        } catch (final IOException e) {
            throw new FabricException("cannot create shared-memory file " + file + ": " + e.getMessage(), e);
        }
    }

    /** Maps the existing {@code file} whole. */
    static UnsafeBuffer open(final Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return wrap(channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size()));
        }
    }

    private static UnsafeBuffer wrap(final MappedByteBuffer mapped) {
        return new UnsafeBuffer(mapped);
    }

    /** Deletes {@code dir} and everything in it; quietly does nothing when it is gone. */
    static void deleteTree(final Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (final IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (final IOException | UncheckedIOException e) {
            // A concurrent deleter got there first, or the directory is gone: nothing left to do.
        }
    }

    static void deleteQuietly(final Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (final IOException e) {
            // best effort: a leftover file is cleaned when the node is attached again
        }
    }
}
