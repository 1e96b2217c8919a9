package io.scythe.txn.rcc.calvin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link CalvinNode#peerIndex}: the node an RPC call comes from. On cluster nodes the caller is its fabric identity
 * ({@code cn1.e3}), not its configured name (issue 18: the configured-name lookup found no node there).
 */
class CalvinPeerIndexTest {

    private static final List<String> NAMES = List.of("cn0", "cn1", "cn2");

    @Test
    void shouldResolveAFabricIdentityToItsConfiguredNode() {
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(), "cn1.e1")).isEqualTo(1);
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(), "cn2.e12")).isEqualTo(2);
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(1, "cn1.e2"), "cn1.e1")).as("the dead incarnation").isEqualTo(1);
    }

    @Test
    void shouldResolveConfiguredNamesAndARejoinedIncarnationsOwnName() {
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(), "cn0")).isEqualTo(0);
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(2, "restarted-cn2"), "restarted-cn2")).isEqualTo(2);
    }

    @Test
    void shouldFindNoNodeForAStranger() {
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(), "cn3.e1")).isEqualTo(-1);
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(), "cn1.e")).isEqualTo(-1);
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(), "cn1.ex")).isEqualTo(-1);
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(), "restarted-cn1")).isEqualTo(-1);
        assertThat(CalvinNode.peerIndex(NAMES, Map.of(), "mn1")).isEqualTo(-1);
    }
}
