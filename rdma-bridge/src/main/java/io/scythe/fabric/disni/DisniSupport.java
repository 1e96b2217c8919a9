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

    /**
     * Why the disni provider reads no NIC clock: what it would use, and what DiSNI lacks. A real ConnectX NIC gives
     * its free-running hardware clock through {@code ibv_query_rt_values_ex} ({@code IBV_VALUES_MASK_RAW_CLOCK}) and
     * stamps completions with it on a queue made by {@code ibv_create_cq_ex} with
     * {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP} (read by {@code ibv_wc_read_completion_ts}, converted to ns with
     * {@code hca_core_clock} or {@code mlx5dv_ts_to_ns}); a peer's clock is learnt from such timestamps of probes
     * (Aurogon §5.2.2), since no verb READs another NIC's clock register.
     */
    public static final String NO_NIC_CLOCK = "the disni provider cannot read NIC clocks: it would need "
        + "ibv_query_rt_values_ex (the NIC's raw clock) and completion queues made by ibv_create_cq_ex with "
        + "IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, and DiSNI 2.x wraps neither (use the local, shm or tcp provider)";

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
