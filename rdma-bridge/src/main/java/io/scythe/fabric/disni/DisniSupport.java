package io.scythe.fabric.disni;

import io.scythe.fabric.FabricException;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether real RDMA can run here: DiSNI's native library ({@code libdisni}) must load and an RDMA device must exist.
 * When it cannot, {@link #check()} says what is missing in one sentence, before anything native is touched.
 */
public final class DisniSupport {
    /** Where Linux lists RDMA devices. */
    static final Path DEVICES = Path.of("/sys/class/infiniband");

    private DisniSupport() {
    }

    /** @throws FabricException naming what is missing: the native library, an RDMA device, or both */
    public static void check() {
        final String libraryProblem = libraryProblem();
        final String deviceProblem = deviceProblem();
        if (libraryProblem != null && deviceProblem != null) {
            throw new FabricException("the disni fabric cannot start: " + libraryProblem + ", and " + deviceProblem);
        }
        if (libraryProblem != null) {
            throw new FabricException("the disni fabric cannot start: " + libraryProblem);
        }
        if (deviceProblem != null) {
            throw new FabricException("the disni fabric cannot start: " + deviceProblem);
        }
    }

    /** Whether {@link #check()} passes. */
    public static boolean available() {
        return libraryProblem() == null && deviceProblem() == null;
    }

    private static String libraryProblem() {
        try {
            System.loadLibrary("disni");
            return null;
        } catch (final UnsatisfiedLinkError | SecurityException e) {
            return "the native library libdisni is not on java.library.path ("
                + System.getProperty("java.library.path", "").replace(File.pathSeparator, ", ")
                + "; build it from DiSNI's sources against rdma-core and pass -Djava.library.path=DIR)";
        }
    }

    private static String deviceProblem() {
        try (var devices = Files.list(DEVICES)) {
            return devices.findAny().isPresent() ? null
                : "no RDMA device is present (" + DEVICES + " is empty)";
        } catch (final Exception e) {
            return "no RDMA device is present (" + DEVICES + " does not exist)";
        }
    }
}
