package io.scythe.fabric.tcp;

import io.scythe.fabric.ClusterSecret;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.Recorder;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Who may connect to a verbs server: only peers that prove the cluster secret; rkeys are checked on every verb. */
class TcpFabricSecretTest {
    private static final String SECRET = "correct horse battery staple";

    private Vertx vertx;
    private final List<TcpFabric> fabrics = new ArrayList<>();
    private String mnAddress;
    private MemoryRegion data;
    private RemoteRegion remote;

    @BeforeEach
    void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            mnAddress = "127.0.0.1:" + free.getLocalPort();
        }
        final Nic mn = fabric(SECRET).attach("mn").await(10, TimeUnit.SECONDS);
        data = mn.register("data", 4096, MemoryKind.HOST);
        remote = data.describe();
    }

    @AfterEach
    void tearDown() throws Exception {
        fabrics.forEach(TcpFabric::close);
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    /** A process of its own: its fabric knows the MN's address, and the secret if given. */
    private TcpFabric fabric(final String secret) {
        final FabricOptions options = new FabricOptions().provider(TcpFabric.NAME).cluster("secret-test")
            .costModel(CostModel.zero()).address("mn", mnAddress).address("cn", "127.0.0.1:0")
            .address("intruder", "127.0.0.1:0");
        if (secret != null) {
            options.secret(new ClusterSecret(secret));
        }
        final TcpFabric f = new TcpFabric(vertx, options);
        fabrics.add(f);
        return f;
    }

    private static QueuePair connect(final Nic from, final CompletionQueue cq) throws Exception {
        return from.connect("mn", cq, new QpOptions()).await(10, TimeUnit.SECONDS);
    }

    private static WcStatus writeLong(final QueuePair qp, final CompletionQueue cq, final long address,
                                      final int rkey, final long value) {
        final UnsafeBuffer src = new UnsafeBuffer(new byte[8]);
        src.putLong(0, value);
        qp.post(new WorkRequest().write(address, rkey, src, 0, 8).wrId(1));
        final Recorder recorder = new Recorder();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (recorder.entries.isEmpty() && System.nanoTime() < deadline) {
            cq.poll(System.nanoTime(), recorder, 16);
        }
        assertThat(recorder.entries).hasSize(1);
        return recorder.last().status();
    }

    @Test
    void shouldServeAPeerThatProvesTheSecret() throws Exception {
        final Nic cn = fabric(SECRET).attach("cn").await(10, TimeUnit.SECONDS);
        final CompletionQueue cq = cn.createCompletionQueue(16);
        final QueuePair qp = connect(cn, cq);
        assertThat(writeLong(qp, cq, remote.address(), remote.rkey(), 42)).isEqualTo(WcStatus.SUCCESS);
        assertThat(data.buffer().getLongVolatile(0)).isEqualTo(42);
    }

    @Test
    void shouldRefuseAPeerWithoutTheSecretOrWithAnotherOne() throws Exception {
        for (final String secret : new String[] {null, "another secret of the same size"}) {
            final Nic intruder = fabric(secret).attach("intruder").await(10, TimeUnit.SECONDS);
            final CompletionQueue cq = intruder.createCompletionQueue(16);
            assertThatThrownBy(() -> connect(intruder, cq))
                .hasMessageContaining("refused the connection")
                .hasMessageContaining("did not prove it knows the cluster secret");
            intruder.close();
        }
        assertThat(data.buffer().getLongVolatile(0)).isZero();
    }

    @Test
    void shouldFailAVerbWithAGuessedOrStaleRkeyAndChangeNothing() throws Exception {
        final Nic cn = fabric(SECRET).attach("cn").await(10, TimeUnit.SECONDS);
        final CompletionQueue cq = cn.createCompletionQueue(16);
        final QueuePair qp = connect(cn, cq);
        assertThat(writeLong(qp, cq, remote.address(), remote.rkey() + 1, 7))
            .isEqualTo(WcStatus.REMOTE_ACCESS_ERROR);
        assertThat(data.buffer().getLongVolatile(0)).isZero();

        // The rkey dies with its region: a region registered again gets another key, the old one fails.
        final Nic mn = fabrics.get(0).nic("mn");
        mn.deregister(data);
        final MemoryRegion again = mn.register("data", 4096, MemoryKind.HOST);
        assertThat(again.rkey()).isNotEqualTo(remote.rkey());
        final QueuePair fresh = connect(cn, cq);
        assertThat(writeLong(fresh, cq, remote.address(), remote.rkey(), 9)).isEqualTo(WcStatus.REMOTE_ACCESS_ERROR);
        assertThat(again.buffer().getLongVolatile(0)).isZero();
    }

    /**
     * Junk on the verbs server's port: random bytes, frames of every type with random bodies, HELLOs with random
     * fields and lengths up to the largest allowed, cut anywhere. Each connection is refused or closed, memory is
     * not touched, and a peer with the secret is still served afterwards. {@code -Dscythe.fuzz.calls=N} for more.
     */
    @Test
    void shouldCloseEveryMalformedConnectionAndStillServeAfterwards() throws Exception {
        final int connections = Integer.getInteger("scythe.fuzz.calls", 1_500);
        final String[] hostPort = mnAddress.split(":");
        final java.util.Random random = new java.util.Random(11);
        final java.net.InetSocketAddress server = new java.net.InetSocketAddress(
            java.net.InetAddress.getLoopbackAddress(), Integer.parseInt(hostPort[1]));
        for (int i = 0; i < connections; i++) {
            // The server answers with at most a refusal, then closes.
            assertThat(TcpJunk.send(server, TcpJunk.connection(i, random), 5_000)).as("connection %d", i)
                .isEqualTo(TcpJunk.Outcome.CLOSED);
        }
        assertThat(data.buffer().getLongVolatile(0)).as("junk changed nothing").isZero();
        final Nic cn = fabric(SECRET).attach("cn").await(10, TimeUnit.SECONDS);
        final CompletionQueue cq = cn.createCompletionQueue(16);
        assertThat(writeLong(connect(cn, cq), cq, remote.address(), remote.rkey(), 42)).isEqualTo(WcStatus.SUCCESS);
        assertThat(data.buffer().getLongVolatile(0)).isEqualTo(42);
    }
}
