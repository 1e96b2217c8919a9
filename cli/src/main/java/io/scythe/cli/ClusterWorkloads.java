package io.scythe.cli;

import io.scythe.bench.workload.SmallBank;
import io.scythe.cluster.NodeWorkload;
import io.scythe.storage.LogDb;
import io.scythe.txn.api.Procedures;

/** The benchmark workloads a cluster of node processes can hold, besides the built-in {@code counters}. */
final class ClusterWorkloads {
    private ClusterWorkloads() {
    }

    /**
     * Adds {@code smallbank} ({@code accounts}, default 10,000): the SmallBank tables, and one procedure per
     * transaction type of the standard mix ({@code Amalgamate}, {@code Balance}, {@code DepositChecking},
     * {@code SendPayment}, {@code TransactSavings}, {@code WriteCheck}), each taking (account a, account b, amount);
     * and {@code Audit(a)}, what account a holds (savings plus checking).
     */
    static void register() {
        NodeWorkload.register("smallbank", spec -> {
            final long accounts = spec.getLong("accounts", 10_000L);
            if (accounts < 2) {
                throw new IllegalArgumentException("smallbank: accounts=" + accounts + " must be at least 2");
            }
            return new NodeWorkload() {
                @Override
                public void load(final LogDb db, final int part, final int parts) {
                    SmallBank.load(db, accounts, part, parts);
                }

                @Override
                public Procedures procedures() {
                    final Procedures procedures = new Procedures();
                    for (final SmallBank.Type type : SmallBank.STANDARD_MIX) {
                        procedures.register(type.name(), 3,
                            args -> txn -> type.procedure().run(txn, args[0], args[1], args[2]));
                    }
                    // What an account holds (savings plus checking): the chaos check reads every account with it.
                    procedures.register("Audit", 1, args -> txn -> io.vertx.core.Future.all(
                        txn.read(SmallBank.SAVINGS, args[0]), txn.read(SmallBank.CHECKING, args[0]))
                        .map(both -> both.<org.agrona.concurrent.UnsafeBuffer>resultAt(0).getLong(0)
                            + both.<org.agrona.concurrent.UnsafeBuffer>resultAt(1).getLong(0)));
                    return procedures;
                }
            };
        });
    }
}
