package io.scythe.txn.rcc;

import io.scythe.txn.FixedTimers;

import io.scythe.txn.Protocol;
import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** RCC's rules that need no cluster: timestamps, forms and their names, WAIT-DIE's direction, refusals. */
class RccRulesTest {
    @Test
    void shouldPutTheIdsInTheLowBitsAndNeverRepeatATimestamp() {
        final FixedTimers timers = new FixedTimers();
        timers.now = 64L * 1000;
        final RccClock clock = new RccClock(timers, 3, 5, 7);
        final long a = clock.next();
        assertThat(a & 0xffffff).isEqualTo((3L << 16) | (5L << 8) | 7);
        assertThat(RccClock.ticksOf(a)).isEqualTo(1000);
        assertThat(RccClock.nodeOf(a)).isEqualTo(3);
        final long b = clock.next(); // same time: the next tick
        assertThat(b).isGreaterThan(a);
        assertThat(RccClock.ticksOf(b)).isEqualTo(1001);
        assertThat(a).isPositive();
        // Another node's timestamps at the same time differ in their ids only.
        final RccClock other = new RccClock(timers, 4, 5, 7);
        assertThat(RccClock.ticksOf(other.next())).isEqualTo(1000);
        assertThatThrownBy(() -> new RccClock(timers, 256, 0, 0)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("node id 256");
    }

    /**
     * The incarnation (the epoch's low bits) sits below the clock and the node slot: ages still compare by ticks, then
     * node, then loop, and two incarnations of one loop at one tick differ.
     */
    @Test
    void shouldKeepTheAgeOrderWithTheIncarnationInTheLowBits() {
        final FixedTimers timers = new FixedTimers();
        assertThat(RccClock.incarnationOf(0x0102_0503_0000_0000L)).isEqualTo(2); // epoch 0x0102: its low 8 bits
        timers.now = 64L * 1000;
        final long old = new RccClock(timers, 3, 5, 255).next();
        final long fresh = new RccClock(timers, 3, 5, 0).next();
        final long otherNode = new RccClock(timers, 4, 0, 0).next();
        assertThat(RccClock.incarnationOfTimestamp(old)).isEqualTo(255);
        assertThat(RccClock.nodeOf(old)).isEqualTo(3);
        assertThat(old).isNotEqualTo(fresh);
        assertThat(old).isLessThan(otherNode); // equal ticks: the node slot decides, whatever the incarnation
        timers.now = 64L * 999;
        final long earlier = new RccClock(timers, 255, 255, 255).next();
        assertThat(earlier).isLessThan(fresh); // an earlier tick is older, whatever the ids
        assertThat(WaitDie.mayWait(earlier, old)).isTrue();
        assertThat(WaitDie.mayWait(old, earlier)).isFalse();
    }

    @Test
    void shouldAdvanceTheClockToALargerRemoteTimestampOnly() {
        final FixedTimers timers = new FixedTimers();
        timers.now = 64L * 10;
        final RccClock clock = new RccClock(timers, 1, 0, 0);
        final RccClock fast = new RccClock(timers, 2, 0, 0);
        timers.now = 64L * 5000;
        final long remote = fast.next();
        timers.now = 64L * 10;
        clock.observe(remote);
        assertThat(RccClock.ticksOf(clock.next())).isEqualTo(5001);
        clock.observe(1L << RccClock.ID_BITS); // smaller: nothing changes
        assertThat(RccClock.ticksOf(clock.next())).isEqualTo(5002);
    }

    @Test
    void shouldLetTheOlderWaitAndTheYoungerDie() {
        assertThat(WaitDie.mayWait(10, 20)).isTrue();
        assertThat(WaitDie.mayWait(20, 10)).isFalse();
        assertThatThrownBy(() -> WaitDie.mayWait(0, 10)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldParseFormsAsOneBitPerStage() {
        assertThat(RccForm.parse("primitive=rpc")).isEqualTo(RccForm.RPC);
        assertThat(RccForm.parse("primitive=onesided")).isEqualTo(RccForm.ONE_SIDED);
        final RccForm hybrid = RccForm.parse("hybrid=010111");
        assertThat(hybrid.oneSided(RccForm.Step.READ)).isFalse();
        assertThat(hybrid.oneSided(RccForm.Step.LOCK)).isTrue();
        assertThat(hybrid.oneSided(RccForm.Step.VALIDATE)).isFalse();
        assertThat(hybrid.oneSided(RccForm.Step.RELEASE)).isTrue();
        assertThat(hybrid.digits()).isEqualTo("010111");
        assertThat(RccForm.parse("hybrid=111111")).isEqualTo(RccForm.ONE_SIDED);
        final RccForm apart = RccForm.parse("primitive=onesided+doorbell=off");
        assertThat(apart.doorbell()).isFalse();
        assertThat(apart.option()).isEqualTo("primitive=onesided+doorbell=off");
        assertThat(RccForm.ONE_SIDED.doorbell()).isTrue();
        assertThatThrownBy(() -> RccForm.parse("primitive=rpc+doorbell=maybe")).hasMessageContaining("doorbell=off");
        assertThatThrownBy(() -> RccForm.parse("hybrid=auto")).hasMessageContaining("names every code");
        assertThatThrownBy(() -> RccForm.parse("hybrid=0101")).hasMessageContaining("6 digits");
        assertThatThrownBy(() -> RccForm.parse("primitive=tcp")).hasMessageContaining("primitive=rpc");
    }

    @Test
    void shouldFindEveryFormByNameAndRefuseOptionsOtherProtocolsDoNotTake() {
        assertThat(ProtocolRegistry.protocol("rcc-nowait").name()).isEqualTo("rcc-nowait");
        final Protocol rpc = ProtocolRegistry.protocol("rcc-waitdie:primitive=rpc");
        assertThat(rpc.name()).isEqualTo("rcc-waitdie:primitive=rpc");
        assertThat(((RccProtocol) rpc).form()).isEqualTo(RccForm.RPC);
        assertThat(ProtocolRegistry.protocol("rcc-nowait:hybrid=000000").name()).isEqualTo("rcc-nowait:primitive=rpc");
        assertThat(ProtocolRegistry.moduleOf("rcc-nowait:primitive=rpc")).isInstanceOf(RccModule.class);
        assertThat(ProtocolRegistry.unlistedNames()).contains("rcc-nowait", "rcc-waitdie", "rcc-occ", "rcc-mvcc",
            "rcc-sundial", "rcc-calvin");
        assertThatThrownBy(() -> ProtocolRegistry.protocol("ford-occ:primitive=rpc"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("takes no options");
    }

    @Test
    void shouldEnumerateEveryCodeOfTheStagesAProtocolHas() {
        final Protocol auto = ProtocolRegistry.protocol("rcc-nowait:hybrid=auto");
        assertThat(auto.variants()).hasSize(8).contains("rcc-nowait:primitive=rpc", "rcc-nowait:primitive=onesided",
            "rcc-nowait:hybrid=111100", "rcc-nowait:hybrid=101111").doesNotHaveDuplicates();
        assertThat(ProtocolRegistry.protocol("rcc-occ:hybrid=auto").variants()).hasSize(32)
            .contains("rcc-occ:hybrid=101100");
        for (final String variant : auto.variants()) {
            assertThat(ProtocolRegistry.protocol(variant).variants()).containsExactly(variant);
        }
        assertThatThrownBy(() -> auto.begin(null, false)).hasMessageContaining("not one form");
        // MVCC has no Validate stage (its reads raise rts), SUNDIAL's is Renew: 2^4 and 2^5 codes.
        assertThat(ProtocolRegistry.protocol("rcc-mvcc:hybrid=auto").variants()).hasSize(16)
            .contains("rcc-mvcc:hybrid=001111", "rcc-mvcc:primitive=rpc");
        assertThat(ProtocolRegistry.protocol("rcc-sundial:hybrid=auto").variants()).hasSize(32)
            .contains("rcc-sundial:hybrid=010111");
        assertThatThrownBy(() -> ProtocolRegistry.protocol("rcc-calvin:hybrid=auto"))
            .hasMessageContaining("no hybrid code");
        assertThat(ProtocolRegistry.protocol("ford-occ").variants()).containsExactly("ford-occ");
    }

    @Test
    void shouldNameCalvinsTwoFormsAndRunOnlyWhereNodesAreWired() {
        for (final String name : new String[] {"rcc-calvin", "rcc-calvin:primitive=onesided"}) {
            final io.scythe.txn.rcc.calvin.CalvinProtocol p = (io.scythe.txn.rcc.calvin.CalvinProtocol)
                ProtocolRegistry.protocol(name);
            assertThat(p.rpc()).as(name).isFalse();
            assertThat(p.retryPolicy(null, new io.vertx.core.json.JsonObject()))
                .isSameAs(io.scythe.txn.RetryPolicy.NO_HINT);
        }
        assertThat(ProtocolRegistry.protocol("rcc-calvin:primitive=onesided").name())
            .isEqualTo("rcc-calvin:primitive=onesided");
        assertThat(((io.scythe.txn.rcc.calvin.CalvinProtocol) ProtocolRegistry.protocol("rcc-calvin:primitive=rpc"))
            .rpc()).isTrue();
        assertThat(ProtocolRegistry.moduleOf("rcc-calvin:primitive=rpc"))
            .isInstanceOf(io.scythe.txn.rcc.calvin.CalvinModule.class);
    }

    @Test
    void shouldPlaceEachProtocolsMetadataOrSayItIsNotPlacedYet() {
        assertThat(TupleFormat.NOWAIT.offsetOf("lock")).isEqualTo(24);
        assertThat(TupleFormat.WAITDIE.offsetOf("tts")).isEqualTo(48);
        assertThat(TupleFormat.OCC.offsetOf("seq")).isEqualTo(32);
        assertThat(TupleFormat.MVCC.offsetOf("tts")).isEqualTo(48);
        assertThat(TupleFormat.MVCC.offsetOf("wts[0]")).isEqualTo(32);
        assertThatThrownBy(() -> TupleFormat.MVCC.offsetOf("rts")).hasMessageContaining("after the value");
        assertThat(TupleFormat.SUNDIAL.offsetOf("lock")).isEqualTo(48);
        assertThat(TupleFormat.SUNDIAL.offsetOf("wts")).isEqualTo(32);
        assertThatThrownBy(() -> TupleFormat.CALVIN.offsetOf("lock")).isInstanceOf(IllegalArgumentException.class);
        // The room each asks memory nodes for: MVCC rts and three older (wts, length, flags, value) slots; SUNDIAL rts.
        final io.scythe.storage.TableSchema eight = io.scythe.storage.TableSchema.fixed(1, "t", 8, 10);
        assertThat(ProtocolRegistry.protocol("rcc-mvcc:primitive=rpc").objectRoom(eight)).isEqualTo(8 + 3 * 24);
        assertThat(ProtocolRegistry.protocol("rcc-sundial").objectRoom(eight)).isEqualTo(8);
        assertThat(ProtocolRegistry.protocol("rcc-occ").objectRoom(eight)).isZero();
        assertThat(ProtocolRegistry.protocol("ford-occ").objectRoom(eight)).isZero();
        assertThatThrownBy(() -> TupleFormat.NOWAIT.offsetOf("seq")).isInstanceOf(IllegalArgumentException.class);
    }
}
