package io.scythe.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each workload's routing key is the record that places its transaction, and drawing it takes no extra random number:
 * a twin random stream that makes only the workload's own draws stays in step with the one {@code draw} used.
 */
class RoutingKeysTest {
    @Test
    void shouldRouteSmallBankByTheFirstAccountAndFlagBalanceReadOnly() {
        final SmallBankSpec spec = new SmallBankSpec(1000, 0.99, "standard");
        final Zipf zipf = new Zipf(1000, 0.99);
        final SplittableRandom random = new SplittableRandom(7);
        final SplittableRandom twin = new SplittableRandom(7);
        final Set<String> readOnly = new HashSet<>();
        for (int i = 0; i < 2000; i++) {
            final OltpSpec.Drawn drawn = spec.draw(random);
            final SmallBank.Type type = SmallBank.pick(SmallBank.mix("standard"), twin);
            final long[] args = SmallBank.drawArgs(zipf, twin);
            assertThat(drawn.type()).isEqualTo(type.name());
            assertThat(drawn.routingKey()).isEqualTo(args[0]);
            if (drawn.readOnly()) {
                readOnly.add(drawn.type());
            }
        }
        assertThat(readOnly).containsExactly("Balance");
        assertThat(random.nextLong()).as("same draws as before").isEqualTo(twin.nextLong());
    }

    @Test
    void shouldRouteYcsbByItsFirstKeyAndFlagTransactionsWithoutWritesReadOnly() {
        final YcsbSpec spec = new YcsbSpec(10_000, 0.99, 4, 0.2);
        final SplittableRandom random = new SplittableRandom(3);
        final SplittableRandom twin = new SplittableRandom(3);
        int readOnly = 0;
        for (int i = 0; i < 2000; i++) {
            final OltpSpec.Drawn drawn = spec.draw(random);
            final YcsbSpec.Plan plan = spec.plan(twin);
            assertThat(drawn.routingKey()).isEqualTo(plan.keys()[0]);
            assertThat(drawn.readOnly()).isEqualTo(plan.writesCount() == 0).isEqualTo("read-only".equals(drawn.type()));
            readOnly += drawn.readOnly() ? 1 : 0;
        }
        assertThat(readOnly).as("0.8^4 of 2000").isBetween(700, 940);
        assertThat(random.nextLong()).isEqualTo(twin.nextLong());
    }

    @Test
    void shouldRouteTpccByTheHomeWarehouseAndFlagOrderStatusAndStockLevelReadOnly() {
        final TpccSpec spec = new TpccSpec(new Tpcc.Scale(10, 30, 100, 10_000), 0.99, 1);
        final Set<Long> warehouses = new HashSet<>();
        final Set<String> readOnly = new HashSet<>();
        for (int seed = 0; seed < 2000; seed++) {
            final OltpSpec.Drawn drawn = spec.draw(new SplittableRandom(seed));
            assertThat(drawn.routingKey()).as("the draw's first number is the home warehouse")
                .isEqualTo(1 + new SplittableRandom(seed).nextInt(10));
            warehouses.add(drawn.routingKey());
            if (drawn.readOnly()) {
                readOnly.add(drawn.type());
            }
        }
        assertThat(warehouses).hasSize(10);
        assertThat(readOnly).containsExactlyInAnyOrder("OrderStatus", "StockLevel");
    }

    @Test
    void shouldRouteTatpBySubscriberAndKeyChurnByItsKey() {
        final TatpSpec tatp = new TatpSpec(1000, "standard", 1);
        final Set<String> readOnly = new HashSet<>();
        for (int seed = 0; seed < 2000; seed++) {
            final OltpSpec.Drawn drawn = tatp.draw(new SplittableRandom(seed));
            final SplittableRandom twin = new SplittableRandom(seed);
            tatp.pick(twin);
            assertThat(drawn.routingKey()).isEqualTo(tatp.subscriber(twin));
            if (drawn.readOnly()) {
                readOnly.add(drawn.type());
            }
        }
        assertThat(readOnly).containsExactlyInAnyOrder(TatpSpec.GET_SUBSCRIBER_DATA, TatpSpec.GET_NEW_DESTINATION,
            TatpSpec.GET_ACCESS_DATA);
        final KeyChurnSpec phantom = new KeyChurnSpec(KeyChurnSpec.Shape.PHANTOM, 4);
        for (int seed = 0; seed < 200; seed++) {
            final OltpSpec.Drawn drawn = phantom.draw(new SplittableRandom(seed));
            assertThat(drawn.routingKey()).isEqualTo(new SplittableRandom(seed).nextInt(4));
            assertThat(drawn.readOnly()).isEqualTo("Audit".equals(drawn.type()));
        }
    }
}
