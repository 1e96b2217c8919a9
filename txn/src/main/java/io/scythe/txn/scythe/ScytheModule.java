package io.scythe.txn.scythe;

import io.scythe.hotspot.AdaptiveWatermarks;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Protocol;
import io.scythe.txn.RetryPolicy;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.spi.HeaderWord;
import io.scythe.txn.spi.LockKind;
import io.scythe.txn.spi.MemoryNodeContext;
import io.scythe.txn.spi.ObjectProbe;
import io.scythe.txn.spi.ProtocolModule;
import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * Scythe as a protocol module: {@code scythe} (OCC until an attempt meets a hot object, then TOCC, §4.2, with shared
 * reader tickets; {@code scythe:exclusive} without them, as the paper has it) and
 * {@code scythe-occ} (OCC only, never switches: to measure what TOCC adds); on memory nodes the Takeout Lock service
 * with its ticket ledger, whose tickets recovery cancels for a dead compute node.
 */
public final class ScytheModule implements ProtocolModule {
    /** Replication is checked for it: ReplicationSimTest (every backup identical to its primary). */
    @Override
    public boolean replicates() {
        return true;
    }

    /** Protocol option: per-object cold watermarks that follow aborts ({@link AdaptiveWatermarks}). */
    public static final String ADAPTIVE_WATERMARKS = "adaptiveWatermarks";
    /** Objects whose adaptive watermark a coordinator keeps. */
    private static final int ADAPTIVE_OBJECTS = 1 << 16;

    /**
     * Scythe: OCC until an attempt meets a hot object, then TOCC (§4.2), whose reads of objects hot for reads, not
     * written by the attempt, take shared (reader) tickets ({@link TakeoutLock#lockShared}): a design deviation
     * ({@link ScytheTxn}'s class doc), the default since issue 22 (helper shared22b: TPC-C +52/+64 %, YCSB +6/+8 %,
     * SmallBank level in the simulator; README, Scythe section). The paper's exclusive-only tickets stay reachable as
     * {@link #EXCLUSIVE} ({@code scythe:exclusive}); {@code scythe:shared}, this variant's name before it became the
     * default, is {@link #SHARED_READS}.
     */
    public static final Protocol SCYTHE = variant("scythe", true);

    /** The option of {@code scythe} naming the shared-ticket variant (the default's old name): {@link #SHARED_READS}. */
    public static final String SHARED_OPTION = "shared";
    /** The option of {@code scythe} naming the paper's exclusive-only tickets: {@link #EXCLUSIVE}. */
    public static final String EXCLUSIVE_OPTION = "exclusive";

    /**
     * {@code scythe:shared}: the same protocol as {@link #SCYTHE} under the name it had before it became the default,
     * so commands and notes written then still run it (and a run asking for both names reports two rows, not one).
     */
    public static final Protocol SHARED_READS = variant("scythe:" + SHARED_OPTION, true);

    /**
     * {@code scythe:exclusive}: Scythe as the paper has it, every TOCC access (read or write) takes an exclusive
     * ticket; the default before issue 22, kept to compare against ({@code --protocols scythe,scythe:exclusive}).
     */
    public static final Protocol EXCLUSIVE = variant("scythe:" + EXCLUSIVE_OPTION, false);

    /** Scythe named {@code name}: its TOCC reads of objects hot for reads take shared tickets when {@code shared}. */
    private static Protocol variant(final String name, final boolean shared) {
        return new Protocol() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Txn begin(final TxnRuntime runtime, final boolean hot) {
                return new ScytheTxn(runtime, hot, shared);
            }

            @Override
            public RetryPolicy retryPolicy(final TxnRuntime runtime, final JsonObject options) {
                return new HotColdRetry(runtime, options.getBoolean(ADAPTIVE_WATERMARKS, false)
                    ? new AdaptiveWatermarks(runtime.watermarks(), ADAPTIVE_OBJECTS) : null);
            }

            /** {@code scythe:exclusive} ({@link #EXCLUSIVE}) or {@code scythe:shared} ({@link #SHARED_READS}). */
            @Override
            public Protocol configured(final String options) {
                if (!"scythe".equals(name)) {
                    return Protocol.super.configured(options);
                }
                if (EXCLUSIVE_OPTION.equals(options)) {
                    return EXCLUSIVE;
                }
                if (SHARED_OPTION.equals(options)) {
                    return SHARED_READS;
                }
                throw new IllegalArgumentException("protocol 'scythe' takes the option '" + EXCLUSIVE_OPTION
                    + "' (scythe:" + EXCLUSIVE_OPTION + ", the paper's exclusive tickets) or '" + SHARED_OPTION
                    + "' (scythe:" + SHARED_OPTION + ", the default's old name), not '" + options + "'");
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    /** Scythe with OCC only (never switches): to measure what TOCC adds. */
    public static final Protocol SCYTHE_OCC = Protocol.of("scythe-occ", (runtime, hot) -> new ScytheTxn(runtime,
        false, false));

    @Override
    public String name() {
        return "scythe";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(SCYTHE, SCYTHE_OCC);
    }

    @Override
    public void startMemoryNode(final MemoryNodeContext node) {
        final TicketLedger tickets = new TicketLedger();
        final TakeoutLockService locks = new TakeoutLockService(node.db(), node.watermarks(), true)
            .register(node.server()).ledger(tickets);
        node.onDeadNode(MemoryNodeContext.Phase.BEFORE_INSERTS, "tickets", (dead, idPrefixes) ->
            tickets.cancel(dead));
        node.publish(TakeoutLockService.class, locks);
        node.publish(TicketLedger.class, tickets);
    }

    @Override
    public List<LockKind> lockKinds() {
        return List.of(TakeoutLockKind.INSTANCE);
    }

    /** The Takeout Lock's words: {@code lower}, {@code upper}, {@code queued_ts} (package doc). */
    /**
     * Scythe's tables have the full header ({@link io.scythe.storage.ObjectFormat#FULL}), the one format Scythe, FORD
     * and FaRM share: their inserts lock by ticket or by CAS word (Table.InsertLock), and recovery, reclamation and
     * the memory node's services read both lock areas whatever of the three runs, so each of them declares the other's
     * words too. Their fingerprints (tools/sim-fingerprint.sh) are those of the one-layout code.
     */
    @Override
    public io.scythe.storage.ObjectFormat objectFormat(final Protocol protocol,
                                                     final io.scythe.storage.TableSchema schema) {
        return io.scythe.storage.ObjectFormat.FULL;
    }

    @Override
    public List<HeaderWord> headerWords() {
        return List.of(HeaderWord.of("lower", ObjectLayout.LOWER_OFFSET), HeaderWord.of("upper",
            ObjectLayout.UPPER_OFFSET), HeaderWord.of("queued_ts", ObjectLayout.QUEUED_TS_OFFSET));
    }

    @Override
    public ObjectProbe probe() {
        return (table, header) -> table.objectMemory().getLongVolatile(header + ObjectLayout.LOWER_OFFSET)
            != table.objectMemory().getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
    }

    @Override
    public List<AbortReason> abortReasons() {
        return ScytheAborts.ALL;
    }

    @Override
    public List<String> configKeys() {
        return List.of(ADAPTIVE_WATERMARKS + ": per-object cold watermarks that follow aborts (default false)");
    }
}
