package io.scythe.txn.spi;

import io.scythe.bridge.Doorbell;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Protocol;
import io.scythe.txn.Stage;
import io.scythe.txn.scythe.ScytheModule;
import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProtocolRegistryTest {
    /** A module named {@code name} registering {@code protocols} and {@code kinds}. */
    private static ProtocolModule module(final String name, final List<Protocol> protocols,
                                         final List<LockKind> kinds) {
        return new ProtocolModule() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public List<Protocol> protocols() {
                return protocols;
            }

            @Override
            public List<LockKind> lockKinds() {
                return kinds;
            }
        };
    }

    @Test
    void shouldFindTheShippedModulesWithUnsafeOnlyByName() {
        assertThat(ProtocolRegistry.listedNames()).containsExactly("scythe", "scythe-occ", "ford-occ", "farm-occ");
        assertThat(ProtocolRegistry.unlistedNames()).contains("unsafe");
        assertThat(ProtocolRegistry.protocol("scythe")).isSameAs(ScytheModule.SCYTHE);
        assertThat(ProtocolRegistry.moduleOf("scythe-occ")).isInstanceOf(ScytheModule.class);
        assertThat(ProtocolRegistry.lockKind(1).name()).isEqualTo("takeout-ticket");
        assertThat(ProtocolRegistry.lockKind(2).name()).isEqualTo("cas-word");
        assertThat(ProtocolRegistry.lockKind(99)).isNull();
    }

    @Test
    void shouldListSharedAndModuleLabelsInTheOrderReportsHadBeforeModulesDefinedThem() {
        assertThat(ProtocolRegistry.abortReasons()).extracting(AbortReason::label).startsWith("locked", "validation",
            "hot-object", "timestamp-order", "queue-full", "duplicate-key", "back-pressure", "tso-unavailable", "user");
        assertThat(ProtocolRegistry.stages()).extracting(Stage::label).startsWith("execute", "timestamp", "lock",
            "validate", "log", "write-back");
        assertThat(Stage.WRITE_BACK.index()).isEqualTo(5);
    }

    @Test
    void shouldPlaceANewReasonByItsPositionAndRefuseATakenLabel() {
        final AbortReason wounded = AbortReason.define("test-wounded", 150);
        final List<String> labels = ProtocolRegistry.abortReasons().stream().map(AbortReason::label).toList();
        assertThat(labels.indexOf("test-wounded")).isEqualTo(labels.indexOf("locked") + 1);
        assertThat(wounded.index()).isGreaterThanOrEqualTo(9);
        assertThatThrownBy(() -> AbortReason.define("locked", 1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("locked");
        assertThatThrownBy(() -> Stage.define("lock", 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldKeepEachModulesHeaderWordsApartAndInTheProtocolPartOfTheHeader() {
        assertThat(ProtocolRegistry.headerWords()).extracting(HeaderWord::name).containsExactly("lower", "upper",
            "queued_ts", "cas_lock", "protocol_word");
        final ProtocolModule latch = new ProtocolModule() {
            @Override
            public String name() {
                return "latch";
            }

            @Override
            public List<Protocol> protocols() {
                return List.of();
            }

            @Override
            public List<HeaderWord> headerWords() {
                return List.of(new HeaderWord("latch", 20, 8)); // across queued_ts and cas_lock
            }
        };
        assertThatThrownBy(() -> ProtocolRegistry.register(latch)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("queued_ts").hasMessageContaining("module scythe");
        assertThatThrownBy(() -> HeaderWord.of("version", 32)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("outside the protocol part");
        assertThat(HeaderWord.of("latch", 48).overlaps(HeaderWord.of("cas_lock", 24))).isFalse();
    }

    @Test
    void shouldRefuseAModuleWhoseProtocolNameOrLockKindIsTaken() {
        assertThatThrownBy(() -> ProtocolRegistry.register(module("copy", List.of(Protocol.of("scythe",
            (runtime, hint) -> null)), List.of()))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("'scythe'").hasMessageContaining("module scythe");
        final LockKind other = new LockKind() {
            @Override
            public int id() {
                return 1;
            }

            @Override
            public String name() {
                return "other";
            }

            @Override
            public boolean free(final DirectBuffer header) {
                return true;
            }

            @Override
            public boolean heldBy(final DirectBuffer header, final long token) {
                return false;
            }

            @Override
            public void release(final Doorbell batch, final long address, final int rkey, final long token) {
            }
        };
        assertThatThrownBy(() -> ProtocolRegistry.register(module("clash", List.of(), List.of(other))))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("takeout-ticket");
        assertThat(ProtocolRegistry.modules()).extracting(ProtocolModule::name).doesNotContain("copy", "clash");
    }

    @Test
    void peerMessagingIsOneHookForSelccAndLotusAndNothingForTheOthers() {
        final Protocol selcc2pl = ProtocolRegistry.protocol("selcc-2pl");
        final ProtocolModule selcc = ProtocolRegistry.peerModuleOf(selcc2pl);
        assertThat(selcc.name()).isEqualTo("selcc");
        assertThat(selcc.peerMessaging(selcc2pl)).isEqualTo(PeerMessaging.EVERY_LOOP);
        assertThat(ProtocolRegistry.peerModuleOf(ProtocolRegistry.protocol("sel-2pl"))).isSameAs(selcc);
        final Protocol lotusProtocol = ProtocolRegistry.protocol("lotus");
        final ProtocolModule lotus = ProtocolRegistry.peerModuleOf(lotusProtocol);
        assertThat(lotus.name()).isEqualTo("lotus");
        assertThat(lotus.peerMessaging(lotusProtocol)).isEqualTo(PeerMessaging.LOOP_PAIRS);
        for (final String name : List.of("scythe", "scythe-occ", "ford-occ", "farm-occ", "rcc-nowait", "aurogon")) {
            assertThat(ProtocolRegistry.peerModuleOf(ProtocolRegistry.protocol(name))).as(name).isNull();
        }
        assertThat(ProtocolRegistry.peerModuleOf(Protocol.of("only-a-test", (runtime, hint) -> null))).isNull();
    }

    @Test
    void eachModuleSuppliesItsTablesFormatWithOnlyItsWords() {
        final io.scythe.storage.TableSchema schema = io.scythe.storage.TableSchema.fixed(1, "t", 8, 16);
        for (final String legacy : List.of("scythe", "scythe-occ", "ford-occ", "farm-occ")) {
            assertThat(ProtocolRegistry.objectFormat(ProtocolRegistry.protocol(legacy), schema)).as(legacy)
                .isSameAs(io.scythe.storage.ObjectFormat.FULL);
        }
        assertThat(words("rcc-nowait", schema)).containsExactly("cas_lock", "protocol_word");
        assertThat(words("selcc-2pl", schema)).containsExactly("protocol_word");
        assertThat(words("lotus", schema)).containsExactly("cas_lock");
        assertThat(words("aurogon", schema)).isEmpty();
        assertThat(ProtocolRegistry.objectFormat(Protocol.of("only-a-test", (runtime, hint) -> null), schema))
            .isSameAs(io.scythe.storage.ObjectFormat.FULL);
    }

    /**
     * The probes asked of a table's objects are kept by format (issue 23 §3) and found again once a module is added: a
     * module registered after a table was probed is asked of it too. Its probe calls only its own table locked, so
     * the other tests' tables are not.
     */
    @Test
    void shouldAskAModuleAddedAfterATableWasProbedOfThatTable() {
        final io.scythe.fabric.local.LocalFabric fabric = new io.scythe.fabric.local.LocalFabric(
            new io.scythe.fabric.FabricOptions().costModel(io.scythe.fabric.CostModel.zero()));
        try {
            final io.scythe.storage.Table table = new io.scythe.storage.LogDb(fabric.attachNow("mn0"))
                .create(io.scythe.storage.TableSchema.fixed(1, "probed", 8, 16));
            final int at = table.offsetOf(table.insert(7, new org.agrona.concurrent.UnsafeBuffer(new byte[8]), 0, 8,
                io.scythe.storage.ObjectLayout.LOADED_VERSION));
            assertThat(ProtocolRegistry.anyLockHeld(table, at)).as("no shipped module's word is set").isFalse();
            ProtocolRegistry.register(new ProtocolModule() {
                @Override
                public String name() {
                    return "probe-added-later";
                }

                @Override
                public List<Protocol> protocols() {
                    return List.of();
                }

                @Override
                public ObjectProbe probe() {
                    return (t, header) -> t == table;
                }
            });
            assertThat(ProtocolRegistry.anyLockHeld(table, at)).as("asked of the module added since").isTrue();
        } finally {
            fabric.close();
        }
    }

    private static List<String> words(final String protocol, final io.scythe.storage.TableSchema schema) {
        return ProtocolRegistry.objectFormat(ProtocolRegistry.protocol(protocol), schema).words().stream()
            .map(io.scythe.storage.ObjectFormat.Word::name).toList();
    }
}
