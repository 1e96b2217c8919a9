package io.scythe.cli;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.MemoryKind;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/** {@code scythe fabric}: shows a cost-model profile and what it implies for each verb. */
@Command(name = "fabric", mixinStandardHelpOptions = true,
    description = "Prints a fabric cost-model profile (its parameters and the latency they imply per verb). "
        + "The parameters and their sources are documented in conf/fabric/.")
public final class FabricCommand implements Callable<Integer> {
    @Accepts(names = OptionChecks.Profiles.class)
    @Option(names = "--profile", defaultValue = "cx5", description = "Profile: "
        + io.scythe.fabric.CostModel.PROFILE_NAMES + " (default: "
        + "${DEFAULT-VALUE}).")
    String profile;

    @Override
    public Integer call() {
        final CostModel model = CostModel.profile(profile);
        System.out.println(model.toJson().encodePrettily());
        final long oneWay = model.oneWayLatencyNs();
        final long pcie = model.pcieRoundTripNs();
        System.out.printf("uncontended 8 B READ  (host memory)   ~ %d ns%n",
            model.doorbellNs() + 2 * oneWay + pcie + Math.round(model.requesterOpNs() + model.responderOpNs()));
        System.out.printf("uncontended 8 B CAS   (host memory)   ~ %d ns, then %d ns per queued CAS on the same "
                + "word%s%n", model.doorbellNs() + 2 * oneWay + model.atomicSameAddressNs(MemoryKind.HOST)
                + model.atomicPipelineNs(MemoryKind.HOST),
            model.atomicConflictHoldNs(MemoryKind.HOST), model.atomicQueuedHoldNs(MemoryKind.HOST) == 0 ? ""
                : String.format(" + %d ns per CAS it finds there, itself included",
                    model.atomicQueuedHoldNs(MemoryKind.HOST)));
        System.out.printf("uncontended 8 B FAA   (device memory) ~ %d ns%n",
            model.doorbellNs() + 2 * oneWay + model.atomicSameAddressNs(MemoryKind.DEVICE));
        return 0;
    }
}
