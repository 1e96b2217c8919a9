package io.scythe.bench.workload;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** TATP's loader follows the spec's population, its checks catch a broken database, its mix is the spec's. */
class TatpTest {
    private static final long SUBSCRIBERS = 4000;
    private LocalFabric fabric;
    private final List<LogDb> dbs = new ArrayList<>();

    @BeforeEach
    void load() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        for (int p = 0; p < 2; p++) {
            final LogDb db = new LogDb(fabric.attachNow("mn" + p));
            Tatp.load(db, SUBSCRIBERS, 5, p, 2);
            dbs.add(db);
        }
    }

    @AfterEach
    void close() {
        fabric.close();
    }

    /** Every violation of every TATP condition. */
    private static List<String> violations(final List<LogDb> dbs) {
        final List<String> all = new ArrayList<>();
        Tatp.consistency(dbs, SUBSCRIBERS).values().forEach(all::addAll);
        return all;
    }

    private Table table(final String name, final long key) {
        return dbs.get((int) (key % 2)).table(name);
    }

    @Test
    void shouldPopulateAsTheSpecSays() {
        long access = 0;
        long facilities = 0;
        long active = 0;
        for (long s = 0; s < SUBSCRIBERS; s++) {
            final Table subscriber = table(Tatp.SUBSCRIBER, s);
            final org.agrona.concurrent.AtomicBuffer row = Tatp.liveRow(subscriber, s);
            assertThat(row).isNotNull();
            // sub_nbr is s_id zero-padded to 15 digits
            final byte[] nbr = new byte[15];
            row.getBytes(Tatp.SubscriberRow.SUB_NBR, nbr);
            assertThat(new String(nbr)).isEqualTo(String.format("%015d", s));
            int subscriberFacilities = 0;
            int subscriberAccess = 0;
            for (int t = 1; t <= 4; t++) {
                subscriberAccess += Tatp.liveRow(table(Tatp.ACCESS_INFO, Tatp.accessInfoKey(s, t)),
                    Tatp.accessInfoKey(s, t)) != null ? 1 : 0;
                final Table sf = table(Tatp.SPECIAL_FACILITY, Tatp.specialFacilityKey(s, t));
                final org.agrona.concurrent.AtomicBuffer f = Tatp.liveRow(sf, Tatp.specialFacilityKey(s, t));
                if (f != null) {
                    subscriberFacilities++;
                    active += f.getByte(Tatp.SpecialFacilityRow.IS_ACTIVE);
                    assertThat(f.getByte(Tatp.SpecialFacilityRow.SF_TYPE)).isEqualTo((byte) t);
                }
            }
            assertThat(subscriberAccess).isBetween(1, 4);
            assertThat(subscriberFacilities).isBetween(1, 4);
            access += subscriberAccess;
            facilities += subscriberFacilities;
        }
        // 1-4 uniformly: 2.5 per subscriber; 85 % of facilities active; 0-3 forwardings per facility: 1.5 each.
        assertThat((double) access / SUBSCRIBERS).isBetween(2.4, 2.6);
        assertThat((double) facilities / SUBSCRIBERS).isBetween(2.4, 2.6);
        assertThat((double) active / facilities).isBetween(0.83, 0.87);
        final long forwardings = Tatp.callForwardingRows(dbs, SUBSCRIBERS);
        assertThat((double) forwardings / facilities).isBetween(1.44, 1.56);
        assertThat(violations(dbs)).isEmpty();
        // the sub_nbr index finds every subscriber
        assertThat(Tatp.subNbrKey(1234)).isEqualTo(0x1234L);
    }

    @Test
    void shouldLoadTheSameRowsWhateverTheNumberOfMemoryNodes() {
        final LogDb one = new LogDb(fabric.attachNow("single"));
        Tatp.load(one, SUBSCRIBERS, 5, 0, 1);
        assertThat(Tatp.callForwardingRows(List.of(one), SUBSCRIBERS))
            .isEqualTo(Tatp.callForwardingRows(dbs, SUBSCRIBERS));
        assertThat(violations(List.of(one))).isEmpty();
    }

    @Test
    void shouldCatchAForwardingWithoutItsFacility() {
        final long[] found = findForwarding();
        final long facility = Tatp.specialFacilityKey(found[0], (int) found[1]);
        assertThat(table(Tatp.SPECIAL_FACILITY, facility).delete(facility, 1)).isEqualTo(Table.OK);
        assertThat(Tatp.consistency(dbs, SUBSCRIBERS).get(Tatp.FORWARDING_HAS_FACILITY)).isNotEmpty()
            .allMatch(v -> v.contains("has no SPECIAL_FACILITY"));
        assertThat(Tatp.consistency(dbs, SUBSCRIBERS).get(Tatp.FORWARDING_FIELDS)).isEmpty();
    }

    @Test
    void shouldCatchAForwardingRowWithAnotherRowsFields() {
        final long[] found = findForwarding();
        final long key = Tatp.callForwardingKey(found[0], (int) found[1], (int) found[2]);
        final Table cf = table(Tatp.CALL_FORWARDING, key);
        // The home layout's row is a view of the memory node's memory: the test corrupts it through it.
        Tatp.liveRow(cf, key).putInt(Tatp.CallForwardingRow.S_ID, (int) found[0] + 1);
        assertThat(violations(dbs)).singleElement().asString().contains("holds another row's fields");
    }

    @Test
    void shouldCountRowsExactly() {
        final long before = Tatp.callForwardingRows(dbs, SUBSCRIBERS);
        final long[] found = findForwarding();
        final long key = Tatp.callForwardingKey(found[0], (int) found[1], (int) found[2]);
        assertThat(table(Tatp.CALL_FORWARDING, key).delete(key, 1)).isEqualTo(Table.OK);
        assertThat(Tatp.callForwardingRows(dbs, SUBSCRIBERS)).isEqualTo(before - 1);
        final Table index = table(Tatp.SUB_NBR_INDEX, Tatp.subNbrKey(17));
        assertThat(index.delete(Tatp.subNbrKey(17), 1)).isEqualTo(Table.OK);
        assertThat(Tatp.consistency(dbs, SUBSCRIBERS).get(Tatp.SUB_NBR_INDEX_ENTRIES))
            .containsExactly("sub_nbr index entry of subscriber 17 is missing or wrong");
    }

    /** The first CALL_FORWARDING row: s_id, sf_type, start_time. */
    private long[] findForwarding() {
        for (long s = 0; s < SUBSCRIBERS; s++) {
            for (int t = 1; t <= 4; t++) {
                for (final int start : Tatp.START_TIMES) {
                    final long key = Tatp.callForwardingKey(s, t, start);
                    if (Tatp.liveRow(table(Tatp.CALL_FORWARDING, key), key) != null) {
                        return new long[] {s, t, start};
                    }
                }
            }
        }
        throw new AssertionError("no CALL_FORWARDING row loaded");
    }

    @Test
    void shouldDrawTheStandardMix() {
        final TatpSpec spec = new TatpSpec(SUBSCRIBERS, "standard", 1);
        final SplittableRandom random = new SplittableRandom(9);
        final Map<String, Integer> counts = new HashMap<>();
        final int draws = 200_000;
        for (int i = 0; i < draws; i++) {
            counts.merge(spec.draw(random).type(), 1, Integer::sum);
        }
        final Map<String, Double> expected = Map.of(TatpSpec.GET_SUBSCRIBER_DATA, 0.35,
            TatpSpec.GET_NEW_DESTINATION, 0.10, TatpSpec.GET_ACCESS_DATA, 0.35, TatpSpec.UPDATE_SUBSCRIBER_DATA, 0.02,
            TatpSpec.UPDATE_LOCATION, 0.14, TatpSpec.INSERT_CALL_FORWARDING, 0.02,
            TatpSpec.DELETE_CALL_FORWARDING, 0.02);
        assertThat(counts.keySet()).isEqualTo(expected.keySet());
        expected.forEach((type, share) -> assertThat(counts.get(type) / (double) draws).as(type)
            .isCloseTo(share, org.assertj.core.data.Offset.offset(0.005)));
        final TatpSpec readUpdate = new TatpSpec(SUBSCRIBERS, "read-update", 1);
        for (int i = 0; i < 10_000; i++) {
            assertThat(readUpdate.draw(random).type())
                .isNotIn(TatpSpec.INSERT_CALL_FORWARDING, TatpSpec.DELETE_CALL_FORWARDING);
        }
        assertThatThrownBy(() -> new TatpSpec(SUBSCRIBERS, "tpcc", 1)).hasMessageContaining("unknown TATP mix");
        assertThatThrownBy(() -> new TatpSpec(0, "standard", 1)).hasMessageContaining("subscribers=0");
    }

    @Test
    void shouldChooseSubscribersByTheSpecsNonUniformRandom() {
        // 2^17 subscribers, so that (random(0, 65535) | random(0, S - 1)) never wraps: the low 8 bits of an s_id
        // are the OR of two uniform bytes, all ones with probability (3/4)^8 ~ 0.100, where uniform gives 1/256.
        final TatpSpec spec = new TatpSpec(1 << 17, "standard", 1);
        final SplittableRandom random = new SplittableRandom(4);
        int allOnes = 0;
        final int draws = 200_000;
        for (int i = 0; i < draws; i++) {
            final long s = spec.subscriber(random);
            assertThat(s).isBetween(0L, (1L << 17) - 1);
            allOnes += (s & 0xFF) == 0xFF ? 1 : 0;
        }
        assertThat(allOnes / (double) draws).isCloseTo(Math.pow(0.75, 8), org.assertj.core.data.Offset.offset(0.004));
        assertThat(spec.params().getLong("nurand_a")).isEqualTo(65_535);
        assertThat(new TatpSpec(2_000_000, "standard", 1).params().getLong("nurand_a")).isEqualTo(1_048_575);
    }

    @Test
    void shouldReadRowsThroughTheLayout() {
        final Table sub = table(Tatp.SUBSCRIBER, 2);
        final org.agrona.concurrent.AtomicBuffer row = Tatp.liveRow(sub, 2);
        assertThat(row.getInt(Tatp.SubscriberRow.S_ID)).isEqualTo(2);
        assertThat(row.getInt(Tatp.SubscriberRow.VLR_LOCATION)).isPositive();
        final int home = io.scythe.txn.spi.ObjectProbe.homeOffset(sub, 2);
        assertThat(sub.objectMemory().getInt(home + ObjectLayout.VALUE_LENGTH_OFFSET))
            .isEqualTo(Tatp.SubscriberRow.BYTES);
    }
}
