package io.scythe.txn;

import io.scythe.storage.remote.RemoteTable;
import io.vertx.core.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every insert and delete case of {@link InsertDeleteTest}, with lookups that miss the address cache done by READs of
 * the index and its absent bound instead of the LOOKUP RPC (reads, keys read as absent and their validation).
 */
class InsertDeleteOneSidedLookupTest extends InsertDeleteTest {
    @BeforeEach
    void oneSided() {
        node().lookupMode = RemoteTable.LookupMode.ONE_SIDED;
    }

    @ParameterizedTest
    @ValueSource(strings = {"ford-occ", "scythe-occ"})
    void shouldLookUpPresentAndAbsentKeysWithoutAnRpc(final String protocol) throws Exception {
        final List<Long> counts = node().on(rt -> {
            final Txn t = io.scythe.txn.spi.ProtocolRegistry.protocol(protocol).begin(rt, false);
            final RemoteTable remote = rt.remote(rt.catalog().table("rows").partitions().get(0));
            return t.read("rows", 1).compose(present -> t.read("rows", 999).transform(absent -> Future.succeededFuture(
                List.of(present.getLong(0), absent.failed() && absent.cause() instanceof UnknownKeyException ? 1L : 0L,
                    remote.rpcs(), remote.reads()))))
                .compose(r -> t.commit().map(r));
        });
        assertThat(counts.get(0)).as("key 1's value").isEqualTo(100L);
        assertThat(counts.get(1)).as("key 999 absent").isEqualTo(1L);
        assertThat(counts.get(2)).as("no LOOKUP RPC").isZero();
        assertThat(counts.get(3)).as("READs of the index and the objects").isGreaterThanOrEqualTo(2L);
    }
}
